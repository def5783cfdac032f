# The initial code agents start from (TODO(author): yours): a valid, weak construction.
set -euo pipefail
mkdir -p results
python3 src/initial.py
