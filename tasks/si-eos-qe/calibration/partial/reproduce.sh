#!/usr/bin/env bash
# CALIBRATION (partial): converged LDA energies at the inputs.json lattice constants and a fit for a0 only:
# no bulk modulus, no convergence studies, no figure.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/a0_only.py
