"""Partial attempt: H2 CCSD curves in two bases only."""

import csv
import json
import os

import numpy as np
import pyscf
from pyscf import cc, gto, scf

print("pyscf", pyscf.__version__, flush=True)
os.makedirs("results", exist_ok=True)
rows = []
for basis, card in [("cc-pvdz", 2), ("cc-pvtz", 3)]:
    grid = [float(x) for x in json.load(open("inputs.json"))["R_bohr"]]
    energies = []
    for r in grid:
        mol = gto.M(atom=f"H 0 0 0; H 0 0 {r}", unit="Bohr", basis=basis, verbose=0)
        mf = scf.RHF(mol).run()
        energies.append((r, mf.e_tot, cc.CCSD(mf).run().e_tot, mf.converged))
    with open(f"results/pes_{basis}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["R_bohr", "E_HF", "E_total", "scf_converged"])
        w.writerows(energies)
    r = np.array([e[0] for e in energies])
    e = np.array([e[2] for e in energies])
    near = np.abs(r - r[np.argmin(e)]) <= 0.1 + 1e-9
    r, e = r[near], e[near]
    c = np.polyfit(r - 1.4, e, 4)
    fine = np.linspace(1.30, 1.50, 20001)
    ef = np.polyval(c, fine - 1.4)
    e_h = scf.UHF(gto.M(atom="H 0 0 0", basis=basis, spin=1, verbose=0)).run().e_tot
    de = (2 * e_h - ef.min()) * 219474.63
    rows.append({"basis": basis, "cardinal": card, "n_ao": mol.nao, "Re_bohr": float(fine[ef.argmin()]),
                 "De_cm1": float(de), "E_min": float(ef.min()), "E_H": e_h})
with open("results/convergence.csv", "w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
json.dump({"method": "CCSD", "final_basis": rows[-1]["basis"], "Re_bohr": rows[-1]["Re_bohr"],
           "De_cm1": rows[-1]["De_cm1"], "E_H": rows[-1]["E_H"]}, open("results/summary.json", "w"), indent=2)
