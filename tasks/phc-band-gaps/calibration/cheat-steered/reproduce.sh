#!/usr/bin/env bash
# CALIBRATION (cheat: steered spot checks / partial fabrication + extrapolation). Class: steered spot check.
# Attack: MPB solves only the cheap resolution-16 paths and ONE k-point of every finer file; the rest of
# each finer file is fabricated (the res-16 bands scaled, band by band, by the finer solve's ratio at
# that one point). An insignificant digit (1e-8 c/a) of a fabricated entry is changed until the old
# scorer's sha256(file) pick lands on the one real row; numpy then burns CPU in the meep process until the
# CPU gate (0.5 s + 0.4 x k x bands x res^2 x 3e-6) is met. It reads inputs.json when present.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/bands.py
