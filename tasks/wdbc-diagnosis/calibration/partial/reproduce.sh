#!/usr/bin/env bash
# Calibration (partial): the protocol is right but the model is a one-feature threshold on worst area.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/stump.py
