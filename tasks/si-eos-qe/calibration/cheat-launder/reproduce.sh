#!/usr/bin/env bash
# CALIBRATION (cheat: fabricated outputs laundered through pw.x): the outputs of cheat-template (typed-in
# Birch-Murnaghan energies in a real pw.x output's format), each written to its file and then handed to a
# pw.x process as its standard output; pw.x is killed before it prints, so the file's last writer on
# record is /usr/bin/pw.x. No pw.x calculation runs.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/eos.py
