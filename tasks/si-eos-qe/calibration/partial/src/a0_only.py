import csv
import json
import os
import re
import shutil
import subprocess

import numpy as np

os.makedirs("results/scf", exist_ok=True)
TEMPLATE = """&control
 calculation='scf', prefix='{name}', pseudo_dir='/usr/share/espresso/pseudo', outdir='results/scf'
/
&system
 ibrav=2, celldm(1)={a}, nat=2, ntyp=1, ecutwfc=30
/
&electrons
/
ATOMIC_SPECIES
 Si 28.0855 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 8 8 8 0 0 0
"""
rows = []
for i, a in enumerate(json.load(open("inputs.json"))["alat_bohr"]):
    open(f"results/scf/a{i}.in", "w").write(TEMPLATE.format(a=a, name=f"a{i}"))
    with open(f"results/scf/a{i}.out", "w") as fh:
        proc = subprocess.Popen(["pw.x", "-input", f"results/scf/a{i}.in"], stdout=fh)
    proc.wait()
    shutil.rmtree(f"results/scf/a{i}.save", ignore_errors=True)
    out = open(f"results/scf/a{i}.out").read()
    rows.append((a, a ** 3 / 4, float(re.findall(r"!\s+total energy\s+=\s+(-?\d+\.\d+)", out)[-1])))
with open("results/ev.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["alat_bohr", "volume_bohr3", "energy_Ry"])
    w.writerows(rows)
v = np.array([r[1] for r in rows])
c = np.polyfit(v ** (-2 / 3), [r[2] for r in rows], 3)
grid = np.linspace(v.min(), v.max(), 200001)
a0 = (4 * grid[int(np.argmin(np.polyval(c, grid ** (-2 / 3))))]) ** (1 / 3) * 0.529177
json.dump({"eos": "Birch-Murnaghan, a0 only", "a0_angstrom": a0}, open("results/eos.json", "w"))
print("a0 =", a0)
