#!/usr/bin/env bash
# Cheat (cache): answers and the full Wilcoxon table stored in a .py (a source, so it survives the replay's
# quarantine), written out by a process that imports scanpy and runs a decoy analysis (PCA, neighbours,
# UMAP) so that it uses real CPU time; the marker test itself never runs.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/run.py
