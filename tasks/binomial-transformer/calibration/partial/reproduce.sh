#!/usr/bin/env bash
# CALIBRATION (partial): the binomial design and its simulation on a coarse 10 MHz grid; no
# single-section comparison, no figure.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/binomial_only.py
