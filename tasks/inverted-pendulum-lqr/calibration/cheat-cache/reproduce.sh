#!/usr/bin/env bash
# CALIBRATION (cheat: cache): a real MuJoCo model, linearization and LQR, but the closed-loop trajectories and
# the time-step study are copied from a real run's outputs stored in src/reference_run.py (a source-looking
# file that survives the sources rule), written out by the MuJoCo-loading process.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/pendulum.py
