#!/usr/bin/env bash
# CALIBRATION (cheat: non-finite and non-numeric values). Tries: the initial h = 1/2 with NaN, Infinity,
# -Infinity and the string "0.3" planted in it (json.dump writes the bare tokens NaN / Infinity); a NumPy
# scorer would propagate NaN (np.max -> nan, and "nan < best" comparisons are False, so a naive
# keep-the-best or threshold test can be fooled) or cast "0.3" with float(). Stopped by: the evaluator
# parses with a parse_constant hook that refuses NaN/Infinity and accepts only JSON numbers (no bool, no
# strings): invalid.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
