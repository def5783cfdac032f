#!/usr/bin/env bash
# Reference package: writes the 600-step construction found offline (embedded in src/construction.py).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/construction.py
