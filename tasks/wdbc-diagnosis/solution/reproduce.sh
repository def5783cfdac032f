#!/usr/bin/env bash
# Reference workflow: standardized logistic regression, stratified 10-fold out-of-fold predictions.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/diagnose.py
