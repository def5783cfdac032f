#!/usr/bin/env bash
# Reference workflow: design and simulate both transformers, measure their bandwidths.
set -euo pipefail
cd "$(dirname "$0")"
python3 src/transformer.py
