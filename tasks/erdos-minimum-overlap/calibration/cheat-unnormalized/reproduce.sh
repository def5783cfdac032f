#!/usr/bin/env bash
# CALIBRATION (cheat: integral below 1). Tries: h = 0.45 constant on n = 100 steps, integral 0.9; a
# smaller integral lowers every overlap (here C = 2 * 0.45 * 0.55 = 0.495 < 0.5 of the initial h = 1/2,
# and h = 0 would give 0). Stopped by: the integral check |sum(h)*2/n - 1| <= 1e-9 (the evaluator rescales
# nothing): invalid, off by 1e-1.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
