#!/usr/bin/env bash
# CALIBRATION (invalid): a complete, plausible package that reads l = 0.3 m as the full pendulum length
# and puts the center of mass at 0.15 m. Every number is self-consistent and wrong.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/pendulum.py
