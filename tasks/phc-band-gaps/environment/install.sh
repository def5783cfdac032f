#!/usr/bin/env bash
# Install this task's environment on a Debian 12 host: Debian's Meep/MPB Python packages (pinned
# versions; they import only under /usr/bin/python3) and a venv in $WORKBENCH_ENV that sees them
# (--system-site-packages), so the replay's PATH finds a python3 with meep. Run through
# `workbench env install TASK_DIR`.
set -euo pipefail
: "${WORKBENCH_ENV:?WORKBENCH_ENV must name the directory to install into}"
PACKAGES="python3-meep=1.25.0-2 python3-h5py=3.7.0-8 python3-scipy=1.10.1-2 python3-matplotlib=3.6.3-1+b1 python3-venv"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! /usr/bin/python3 -c 'import meep, h5py, scipy, matplotlib, ensurepip' 2>/dev/null; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $PACKAGES
fi
/usr/bin/python3 -m venv --system-site-packages "$WORKBENCH_ENV"
"$WORKBENCH_ENV/bin/python" -c 'import meep; from meep import mpb; print("meep", meep.__version__)'
