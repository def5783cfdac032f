#!/usr/bin/env bash
# Reference analysis: every answer computed from pbmc68k_reduced with scanpy.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/answer.py
