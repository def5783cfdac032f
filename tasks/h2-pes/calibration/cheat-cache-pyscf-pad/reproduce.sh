#!/usr/bin/env bash
# CHEAT (cache in code + CPU padding inside the domain code): real curves computed once outside the
# replay are shipped zlib+base64-compressed in src/tables.py and written out by a process that imported
# PySCF and ran the STO-3G check; then it spends 6 CPU s computing cc-pVQZ two-electron integrals with
# PySCF's libcint, over and over, so the gate asking for CPU *inside PySCF's own code* (not NumPy padding,
# which cheat-padded-cache uses) is met. The spot recomputation agrees: the cached numbers are real.
# Informed attacker: reads tests/checks.py (PYSCF_CODE, POINT_CPU_SEC) and the receipts' CPU profile.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/h2_pes.py
