#!/usr/bin/env bash
# Reference workflow: design, simulate and compare the two N = 5 low-pass filters.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/lpf.py
