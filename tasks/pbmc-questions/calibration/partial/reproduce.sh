#!/usr/bin/env bash
# Calibration (partial): the Wilcoxon table and the MCQs it or the obs table answer directly; no open answers.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/obs_only.py
