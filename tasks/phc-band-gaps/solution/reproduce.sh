#!/usr/bin/env bash
# Reference workflow: MPB band structures at resolutions 16, 32, 64 and the two gaps.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/bands.py
