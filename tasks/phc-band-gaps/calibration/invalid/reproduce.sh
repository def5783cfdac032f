#!/usr/bin/env bash
# CALIBRATION (invalid): a complete, plausible package that passes the permittivities as refractive
# indices (Medium(index=8.9), index=13): a different, much stronger crystal, reported as the paper's.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/bands.py
