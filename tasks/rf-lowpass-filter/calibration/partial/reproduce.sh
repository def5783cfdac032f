#!/usr/bin/env bash
# CALIBRATION (partial): a correct maximally flat design and simulation, but no equal-ripple
# comparison and no figure (it reads inputs.json like a full package).
set -euo pipefail
cd "$(dirname "$0")"
python3 src/maxflat_only.py
