#!/usr/bin/env bash
# Entry point of your package: the workbench runs `bash reproduce.sh` from the package root in a clean
# sandbox with no network. Write every result under results/ (see instruction.md).
set -euo pipefail
echo "reproduce.sh: not implemented yet" >&2
exit 1
