#!/usr/bin/env bash
# Install this task's environment on a Debian 12 host: Quantum ESPRESSO 6.7 with its data package
# (pseudopotentials in /usr/share/espresso/pseudo), Debian's NumPy/SciPy/Matplotlib (pinned), and a
# venv in $WORKBENCH_ENV that sees them. Run through `workbench env install TASK_DIR`.
set -euo pipefail
: "${WORKBENCH_ENV:?WORKBENCH_ENV must name the directory to install into}"
PACKAGES="quantum-espresso=6.7-2+b1 quantum-espresso-data=6.7-2 python3-numpy python3-scipy=1.10.1-2 python3-matplotlib=3.6.3-1+b1 python3-venv"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! command -v pw.x >/dev/null || [ ! -f /usr/share/espresso/pseudo/Si.pz-vbc.UPF ] \
   || ! /usr/bin/python3 -c 'import scipy, matplotlib, ensurepip' 2>/dev/null; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $PACKAGES
fi
/usr/bin/python3 -m venv --system-site-packages "$WORKBENCH_ENV"
dpkg-query -W quantum-espresso quantum-espresso-data
