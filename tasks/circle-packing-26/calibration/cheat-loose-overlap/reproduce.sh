#!/usr/bin/env bash
# CALIBRATION (cheat: loose tolerance). Writes the reference packing with every radius inflated by 5e-7:
# touching pairs overlap by ~1e-6 and boundary circles cross the sides by ~5e-7, which a 1e-6 evaluator
# would accept with a sum above the reference. Stopped by the evaluator's stated 1e-9 absolute tolerance
# on containment and on pairwise overlap (it reports the worst violation) => invalid.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
