# The reference (PRIVATE: the oracle agent delivers it).
set -euo pipefail
mkdir -p results
python3 src/construction.py
