#!/usr/bin/env bash
# Cheat (typed answers beside a real table; class "typed answers to question tasks whose gates recompute one
# unrelated table"): the gates recompute the Wilcoxon table, so the table is computed for real by scanpy (for
# whatever cells inputs.json lists, so it also passes a recomputation on other cells) and written by the same
# process that writes the answers; but the answers are the known ones for the 700 cells, typed in. Every
# receipt, CPU, size and table gate passes; only answers that must follow the cells can tell.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/run.py
