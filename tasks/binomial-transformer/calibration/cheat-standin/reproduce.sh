#!/usr/bin/env bash
# CALIBRATION (cheat: a cheap stand-in labelled as the real computation). The "simulated" reflection
# coefficients are the small-reflection closed forms (the binomial 2^N A e^{-jN theta} cos^N theta, the
# single section's Gamma_0 + Gamma_1 e^{-2j theta} approximation), wrapped in scikit-rf Networks, written
# by scikit-rf and reported as a simulation of cascaded lines; no line or load is ever cascaded.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/transformer.py
