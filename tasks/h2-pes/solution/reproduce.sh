#!/usr/bin/env bash
# Reference workflow: H2 potential curves in the cc-pVXZ series (X = D, T, Q) and the STO-3G check.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/h2_pes.py --out results
