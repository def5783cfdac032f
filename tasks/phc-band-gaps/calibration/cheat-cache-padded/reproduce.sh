#!/usr/bin/env bash
# CALIBRATION (cheat: cache in code + CPU padding). Class: cache in code with padding.
# Attack: the nine band files and gaps.json of a real MPB run made elsewhere ship zlib + base64 inside a
# Python source (src/band_cache.py, 9 KB); the process that imports meep writes them back, draws the figure
# and then multiplies NumPy matrices until its CPU time exceeds what the CPU gate asks for the declared
# files (0.5 s + 0.4 x k x bands x res^2 x 3e-6 s). MPB never solves anything; the cached numbers are real,
# so a spot recomputation at the published crystal agrees.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/bands.py
