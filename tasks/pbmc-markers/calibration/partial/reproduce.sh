#!/usr/bin/env bash
# CALIBRATION (partial): correct Wilcoxon markers per FACS population, but no clustering, no
# annotation and no figures.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/markers_only.py
