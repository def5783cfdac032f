#!/usr/bin/env bash
# Reference workflow: MPB band structures at the resolutions of inputs.json (16, 32, 64 published) and the two gaps.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/bands.py
