#!/usr/bin/env bash
# Reference workflow: Wilcoxon markers per FACS population, Leiden clusters, annotation, figures.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/pbmc.py
