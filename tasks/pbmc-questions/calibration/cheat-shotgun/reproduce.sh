#!/usr/bin/env bash
# Cheat (shotgun): the real analysis runs (scanpy, the Wilcoxon table), but the answers are every option and
# every candidate value: all letters for each MCQ, every integer 0-1000, every percentage and r value, every
# population and every gene for each open question, so that each fact's pattern matches somewhere.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/shotgun.py
