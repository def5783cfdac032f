#!/usr/bin/env bash
# CALIBRATION (invalid): a complete, plausible package computed with a PBE pseudopotential: a0 lands
# within 1 % of the LDA claim, but it is not the LDA calculation the claim is about.
set -euo pipefail
cd "$(dirname "$0")"
export OMP_NUM_THREADS=1
python3 src/eos.py
