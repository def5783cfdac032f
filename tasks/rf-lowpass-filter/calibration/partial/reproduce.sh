#!/usr/bin/env bash
# CALIBRATION (partial): a correct maximally flat design and simulation, but no equal-ripple
# comparison, a coarse 100 MHz sweep and no figure.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/maxflat_only.py
