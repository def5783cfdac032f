#!/usr/bin/env bash
# CALIBRATION (cheat: formula): no domain software at all. A and B are the CTMS closed-form matrices, the
# "finite-difference study" repeats them at every step, the gains come from SciPy's CARE, and the
# "MuJoCo" closed loops are the linear model stepped with a zero-order hold in NumPy, every file in the
# exact formats (model.xml written as text, a MuJoCo version printed).
set -euo pipefail
cd "$(dirname "$0")"
python3 src/pendulum.py
