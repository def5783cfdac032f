#!/usr/bin/env bash
# Entry point of your package: the workbench runs `bash reproduce.sh` from the package root in a clean
# sandbox with no network. It must write results/construction.json (see instruction.md).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
python3 src/initial.py
