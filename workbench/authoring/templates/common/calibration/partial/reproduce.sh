set -euo pipefail
mkdir -p results
python3 src/estimate.py
