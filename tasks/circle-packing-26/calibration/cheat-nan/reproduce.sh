#!/usr/bin/env bash
# CALIBRATION (cheat: non-finite values). Writes the starter grid with one radius NaN and one Infinity
# (json's bare NaN / Infinity tokens), hoping NaN slips through comparisons and inf inflates the sum.
# Stopped by the evaluator's parser refusing NaN/Infinity tokens and its finite-real-number check on every
# coordinate and radius => invalid.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
