#!/usr/bin/env bash
# CALIBRATION (cheat: relabel): a real MuJoCo workflow, but the closed loops are ONE cheap run at 10 ms,
# spline-interpolated onto a 1 ms grid and written as the finest time step; the time-step study is a
# plausible first-order scaling, not runs at those steps.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/pendulum.py
