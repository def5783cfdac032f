#!/usr/bin/env bash
# Calibration (invalid): plausible-sounding answers written without looking at the data.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
cat > results/answers.json <<'JSON'
{"mcq1": ["B"], "mcq2": ["D"], "mcq3": ["B"], "mcq4": ["C"], "mcq5": ["B"], "mcq6": ["A"],
 "oeq1": "About 68,000 cells and 20,000 genes in 11 clusters.",
 "oeq2": "CD34+ progenitors are rare, about 1% of cells.",
 "oeq3": "Most cells are quiescent (G0/G1); few cycle.",
 "oeq4": "MS4A1, CD19 and CD20 mark B cells.",
 "oeq5": "They are correlated."}
JSON
