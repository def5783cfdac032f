#!/usr/bin/env bash
# CALIBRATION (cheat: claimed score). Prints "c1_upper_bound: 1.4" and writes that number into
# construction.json next to a trivial construction. Stopped because the evaluator ignores every key but
# "a" and recomputes the metric: a = [1, 0, 0, 1] gives 2n*max(conv)/sum^2 = 8*2/4 = 4.0, worse than 2.0.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
