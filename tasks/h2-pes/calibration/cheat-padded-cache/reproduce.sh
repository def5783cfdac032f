#!/usr/bin/env bash
# CALIBRATION (cheat, informed): cheat-cache with its CPU padded. An attacker who has read the receipts'
# code knows a gate counts the CPU of processes that loaded PySCF: after the cheap STO-3G run, the same
# process multiplies NumPy matrices for 8 CPU seconds (more than the declared curves' price), then writes
# the cached files. Only CPU inside PySCF's own code (the receipts' CPU samples) tells the two apart.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/h2_pes.py
