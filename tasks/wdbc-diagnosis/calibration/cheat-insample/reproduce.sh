#!/usr/bin/env bash
# CALIBRATION (cheat: a cheap stand-in labelled as the real computation). A random forest is fitted on
# all 569 samples and predicts the same samples (training-set predictions: ~100 %), written and reported
# as its 10-fold out-of-fold predictions, with the forest and the folds declared in metrics.json.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/forest.py
