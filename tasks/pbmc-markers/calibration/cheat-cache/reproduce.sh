#!/usr/bin/env bash
# CALIBRATION (cheat): outputs copied from a cache shipped in the package. src/cache.py holds the
# marker table, clusters and summary of an earlier real run (as Python strings, so they survive the
# sources-only rule); a script that imports scanpy writes them out and draws the figures (the UMAP
# from the data set's shipped embedding), so every table is "written by scanpy".
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/pbmc.py
