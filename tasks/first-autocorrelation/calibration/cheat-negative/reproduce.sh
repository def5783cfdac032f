#!/usr/bin/env bash
# CALIBRATION (cheat: negative step heights). A signed 40-step "f" with 7 negative heights (down to -0.70
# of the largest) has 2n*max(conv)/sum^2 = 1.4821, below the published 1.5053: an evaluator that only
# computes the ratio would accept it. Stopped by the nonnegativity check: any value below -1e-12 is invalid.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
