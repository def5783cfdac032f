#!/usr/bin/env bash
# CALIBRATION (invalid): a complete, plausible package with the sections in reverse order (54.5 ohm
# next to the 100 ohm line). It still matches exactly at f0, so the numbers look fine; the response is not binomial.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/transformer.py
