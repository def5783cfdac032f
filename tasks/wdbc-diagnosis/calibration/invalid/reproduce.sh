#!/usr/bin/env bash
# Calibration (invalid): claims a better-than-SOTA accuracy without producing any predictions.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
cat > results/metrics.json <<'JSON'
{"all-features": {"accuracy": 99.6, "folds": 10, "n_features": 30},
 "three-features": {"accuracy": 99.1, "folds": 10, "n_features": 3}}
JSON
