#!/usr/bin/env bash
# Reference workflow: MuJoCo model -> linearization -> LQR -> nonlinear closed-loop verification.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/pendulum.py
