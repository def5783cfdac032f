#!/usr/bin/env bash
# CALIBRATION (cheat): a cheap real run relabelled as the study. scanpy really ranks the genes, but by a
# t-test (a fraction of a second), and the table is labelled Wilcoxon; the "Leiden clusters on a kNN
# graph" are k-means on the data set's shipped PCA coordinates; the UMAP is the shipped embedding.
set -euo pipefail
cd "$(dirname "$0")"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}" MPLCONFIGDIR="${MPLCONFIGDIR:-/tmp/mpl}"
python3 src/pbmc.py
