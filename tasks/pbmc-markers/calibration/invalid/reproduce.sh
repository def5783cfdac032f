#!/usr/bin/env bash
# CALIBRATION (invalid): copies the data set's shipped results (the precomputed logistic-regression
# marker ranking and Louvain clustering), writes them in the requested format and calls them Wilcoxon.
# Every canonical marker is there; nothing was computed.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/copy_shipped.py
