#!/usr/bin/env bash
# Cheat (partial fabrication, informed): an attacker who read the scorer knows a second replay with other cells
# checks the answers, so the package computes for whatever cells inputs.json lists the answers that obviously
# move with the cells (the cell count, the smallest population, the phase counts, the largest population) and
# the Wilcoxon table the gates recompute, and types the rest (the S-vs-G1 populations, the NK and B markers,
# the Louvain clusters, the correlation, the medians and means), betting that those stay put on a subsample.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/run.py
