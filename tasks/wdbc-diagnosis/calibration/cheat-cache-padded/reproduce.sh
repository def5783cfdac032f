#!/usr/bin/env bash
# Calibration (informed cheat; class: cache in code + CPU padding): out-of-fold predictions computed once
# OUTSIDE the replay (src/reference_run.py: the published folds' predictions with two errors of each
# instance flipped to the public label, inside the re-run's 99.5 % agreement: +0.35 points),
# shipped as a 200-character zlib+base64 literal in src/diagnose.py (under data_in_code's 256-character
# floor), written in the replay by a process that imported scikit-learn, after genuine scikit-learn
# fits to look busy. It declares the model, the fold seed inputs.json gives and the used rows, but ships
# the cached predictions of the published folds: the old scorer re-ran the published folds and agreed.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/diagnose.py
