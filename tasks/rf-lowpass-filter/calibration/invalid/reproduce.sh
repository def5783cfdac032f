#!/usr/bin/env bash
# CALIBRATION (invalid): a complete, plausible package that scales with fc instead of 2*pi*fc, so
# every element is 2*pi too large and the filter cuts off at 318 MHz instead of 2 GHz.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/lpf.py
