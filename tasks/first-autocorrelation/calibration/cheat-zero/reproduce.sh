#!/usr/bin/env bash
# CALIBRATION (cheat: (near-)zero function). 50 heights of 1e-200: every product a_i a_j underflows to 0
# in double precision, so a naive 2n*max(conv)/sum/sum returns 0.0 (and all zeros gives 0/0). Stopped by the
# rule sum(a) > 1e-9 (here 5e-199); the evaluator also rescales by max(a) before multiplying.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
