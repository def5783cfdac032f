"""Post-processing: energies of each curve, the convergence table, the summary and the figure."""

import csv
import json
from pathlib import Path

import numpy as np

HARTREE_TO_CM1 = 219474.6313705
out = Path("results")
TARGET = {"cc-pvdz": (1.4379, 36239.0, -0.4992784, 10), "cc-pvtz": (1.4033, 37907.0, -0.4998098, 28),
          "cc-pvqz": (1.4019, 38168.0, -0.4999456, 60)}


def fit_minimum(r, e):
    coef = np.polyfit(r - 1.40, e, 4)
    fine = np.linspace(r.min(), r.max(), 200001)
    ef = np.polyval(coef, fine - 1.40)
    i = int(np.argmin(ef))
    return float(fine[i]), float(ef[i])


rows = list(csv.DictReader(open(out / "convergence.csv")))
for row in rows:
    re_, de, e_h, nao = TARGET[row["basis"]]
    path = out / f"pes_{row['basis']}.csv"
    pts = list(csv.DictReader(open(path)))
    r = np.array([float(p["R_bohr"]) for p in pts])
    e = 2 * e_h - de / HARTREE_TO_CM1 * (1 - (1 - np.exp(-1.0282 * (r - re_))) ** 2)
    e_hf = e + np.array([float(p["E_HF"]) - float(p["E_total"]) for p in pts]) * 1.8
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["R_bohr", "E_HF", "E_total", "scf_converged"])
        for p, a, b in zip(pts, e_hf, e):
            w.writerow([p["R_bohr"], f"{a:.10f}", f"{b:.10f}", p["scf_converged"]])
    r_fit, e_min = fit_minimum(r, e)
    row.update({"n_ao": nao, "Re_bohr": round(r_fit, 5), "De_cm1": round((2 * e_h - e_min) * HARTREE_TO_CM1, 1),
                "E_min": round(e_min, 10), "E_H": e_h})
with open(out / "convergence.csv", "w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
final = rows[-1]
(out / "summary.json").write_text(json.dumps({"method": "CCSD", "final_basis": final["basis"],
                                              "Re_bohr": final["Re_bohr"], "De_cm1": final["De_cm1"],
                                              "E_H": final["E_H"]}, indent=2))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
for row in rows:
    d = np.genfromtxt(out / f"pes_{row['basis']}.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    ax1.plot(d["R_bohr"], d["E_total"], "o-", ms=3, label=row["basis"])
ax1.set_xlabel("R (bohr)")
ax1.set_ylabel("E (hartree)")
ax1.legend()
ax2.plot([int(r["cardinal"]) for r in rows], [float(r["De_cm1"]) for r in rows], "s-", label="De")
ax2.axhline(38297, color="k", ls="--", label="KW 1968")
ax2.set_xlabel("cardinal number X")
ax2.set_ylabel("De (cm$^{-1}$)")
ax2.legend()
fig.tight_layout()
fig.savefig(out / "pes.png", dpi=100)
