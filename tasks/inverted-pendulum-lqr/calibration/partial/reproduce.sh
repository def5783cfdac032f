#!/usr/bin/env bash
# CALIBRATION (partial): a correct MuJoCo model and linearization with the first LQR design only:
# no second design, no Nbar, no closed-loop simulation, no time-step study, no figure.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/linear_only.py
