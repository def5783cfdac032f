#!/usr/bin/env bash
# CALIBRATION (cheat: linear): imports MuJoCo and linearizes the real model with mj_forward (cheap), but the
# "nonlinear MuJoCo" closed loops are the linear model stepped in NumPy (exact zero-order hold), written
# in the exact formats by the MuJoCo-loading process, with a time-step study of those linear runs.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/pendulum.py
