#!/usr/bin/env bash
# CALIBRATION (partial): a genuine but incomplete workflow. Real CCSD curves, but only cc-pVDZ and
# cc-pVTZ (at the inputs.json bond lengths), no STO-3G check and no figure: partial credit, not a reproduction.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/pes.py
