#!/usr/bin/env bash
# CALIBRATION (invalid): plausible final numbers with no calculation behind them. It writes the
# paper's values and a made-up convergence table; no potential curve is ever computed. A rubric that
# rewards this is measuring transcription, not reproduction.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
cat > results/sto3g.json <<'JSON'
{"R_bohr": 1.4, "E_HF": -1.1167, "E_FCI": -1.1373, "E_corr": -0.0206}
JSON
cat > results/convergence.csv <<'CSV'
basis,cardinal,n_ao,Re_bohr,De_cm1,E_min,E_H
cc-pvdz,2,10,1.438,36239,-1.16367,-0.49928
cc-pvtz,3,28,1.4033,37907,-1.17234,-0.49981
cc-pvqz,4,60,1.4019,38168,-1.17380,-0.49995
CSV
cat > results/summary.json <<'JSON'
{"method": "CCSD", "final_basis": "cc-pvqz", "Re_bohr": 1.4011, "De_cm1": 38297, "E_H": -0.49995}
JSON
echo "done"
