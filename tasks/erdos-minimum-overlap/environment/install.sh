#!/usr/bin/env bash
# Install this task's environment on a Debian host into $WORKBENCH_ENV: a venv built from Debian's
# /usr/bin/python3 (so Debian's python3-* packages stay importable if a task needs them) with the
# pinned PyPI packages of requirements.txt. Run through `workbench env install TASK_DIR`.
set -euo pipefail
: "${WORKBENCH_ENV:?WORKBENCH_ENV must name the directory to install into}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv
fi
/usr/bin/python3 -m venv "$WORKBENCH_ENV"
"$WORKBENCH_ENV/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check -r "$here/requirements.txt"
"$WORKBENCH_ENV/bin/python" -c 'import numpy; print("numpy", numpy.__version__)'
