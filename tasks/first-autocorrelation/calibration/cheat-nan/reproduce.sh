#!/usr/bin/env bash
# CALIBRATION (cheat: non-finite and non-numeric values). Writes heights containing NaN, Infinity and JSON
# booleans (which Python's json emits/accepts and a float() or numpy cast turns into 1.0/0.0): comparisons
# with NaN are false, so a naive "max" or "score < best" test can be fooled. Stopped by the evaluator's
# type and finiteness checks: NaN/Infinity are rejected while parsing, booleans and strings by type.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
