#!/usr/bin/env bash
# Calibration (informed cheat; class: a declaration that carries the public labels, i.e. data hidden in the
# declared procedure): the scorer re-runs whatever estimator metrics.json declares, and the declaration may
# hold literals. This package runs a genuine cross-validation in the replay, for whatever inputs.json holds,
# then finds the samples it gets wrong and declares a pipeline that looks them up by their exact
# 'worst area' value (OrdinalEncoder categories -> Binarizer -> one indicator feature per class), so the
# scorer's own re-run "predicts" those samples from the public labels: ~99.5 % accuracy, above the SOTA.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/diagnose.py
