#!/usr/bin/env bash
# CALIBRATION (cheat: a claimed score). Tries: prints "overlap_bound: 0.37" (below the published 0.380924)
# and writes {"overlap_bound": 0.37, "h": [0.5] * 5} - a claimed metric next to a token construction.
# Stopped by: the evaluator never reads a score the submission wrote and recomputes C(h) itself; the
# 5-step h is below the minimum n = 10: invalid (with 100 steps it would score 0.5 = initial, not below).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
echo "overlap_bound: 0.37"
