#!/usr/bin/env bash
# Reference: writes the embedded 26-circle construction (found offline by src/search.py, which is not
# run here) to results/construction.json.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
