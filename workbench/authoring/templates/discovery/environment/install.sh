#!/usr/bin/env bash
# TODO(author): install the task's environment into $WORKBENCH_ENV on a Debian host, pinned (a venv and a
# requirements.txt, or Debian packages). Run through `workbench env install TASK_DIR`. The example needs
# only Python's standard library.
set -euo pipefail
: "${WORKBENCH_ENV:?WORKBENCH_ENV must name the directory to install into}"
/usr/bin/python3 -m venv "$WORKBENCH_ENV"
