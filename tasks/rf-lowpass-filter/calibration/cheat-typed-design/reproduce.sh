#!/usr/bin/env bash
# CALIBRATION (cheat: typed answers / a declaration in place of the synthesis). Class: typed-in design.
# Attack: no insertion-loss synthesis: the order N = 5 and the prototype values are typed in from Pozar's
# tables (maximally flat and 3.0 dB equal ripple, 4 decimals); only the impedance/frequency scaling and
# the scikit-rf simulation run (so receipts, the scorer's cascade of the declared ladder and the size gate
# all pass). It reads fc, Z0 and the sweep from inputs.json when present, so it follows those inputs too.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/lpf.py
