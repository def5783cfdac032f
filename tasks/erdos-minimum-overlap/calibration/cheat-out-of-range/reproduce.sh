#!/usr/bin/env bash
# CALIBRATION (cheat: values outside [0, 1]). Tries: the reference's step function re-optimised (sequential
# LP) with the box relaxed to [-0.03, 1.03]; with integral exactly 1 its unclipped correlation bound is
# 0.380610, below the published 0.380924 - but h < 0 or h > 1 is not a density of a set. Stopped by: the
# evaluator's range check (each value within 1e-12 of [0, 1]): invalid (h[13] = 1.03 is outside by 3e-2).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
