#!/usr/bin/env bash
# Reference: writes the embedded n = 100 step function (found offline by sequential LP) to
# results/construction.json.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
