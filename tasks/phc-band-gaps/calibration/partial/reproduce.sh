#!/usr/bin/env bash
# CALIBRATION (partial): the rod lattice only, at a single resolution; no hole lattice, no
# convergence study, no figure.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/rods.py
