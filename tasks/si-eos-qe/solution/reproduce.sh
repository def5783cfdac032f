#!/usr/bin/env bash
# Reference workflow: convergence studies, then the 9-point equation of state and its fit.
set -euo pipefail
cd "$(dirname "$0")"
export OMP_NUM_THREADS=1
python3 src/eos.py
