"""Full-length closed-loop curves (6 s) for the report, from the linearization the MuJoCo run wrote."""

import csv
import json
from pathlib import Path

import matplotlib
import numpy as np
import scipy.linalg as sl

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = Path("results")
DTS = [0.01, 0.005, 0.002, 0.001]
lin, lqr = json.load(open(OUT / "linearization.json")), json.load(open(OUT / "lqr.json"))
A, B = np.array(lin["A"]), np.array(lin["B"])
K, nbar = np.array(lqr["designs"][1]["K"]), lqr["Nbar"]


def simulate(r, s0, dt):
    Md = sl.expm(np.block([[A, B], [np.zeros((1, 5))]]) * dt)
    F, Gd = Md[:4, :4], Md[:4, 4]
    s, rows = np.array(s0, float), []
    for i in range(int(round(6.0 / dt)) + 1):
        u = nbar * r - K @ s
        rows.append((i * dt, s[0], s[2], u))
        s = F @ s + Gd * u
    return np.array(rows)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows([[f"{v:.10g}" for v in row] for row in rows])


runs = {dt: (simulate(0.0, [0, 0, 0.1, 0], dt), simulate(0.2, [0, 0, 0, 0], dt)) for dt in DTS}
fine = runs[DTS[-1]][1]
study = [(dt, float(np.abs(runs[dt][1][:, 1] - np.interp(runs[dt][1][:, 0], fine[:, 0], fine[:, 1])).max()),
          float(np.abs(runs[dt][1][:, 2] - np.interp(runs[dt][1][:, 0], fine[:, 0], fine[:, 2])).max())) for dt in DTS]
write_csv(OUT / "timestep_study.csv", ["dt", "max_dev_x", "max_dev_phi"], study)
write_csv(OUT / "regulation.csv", ["t", "x", "phi", "u"], runs[DTS[-1]][0])
write_csv(OUT / "step_response.csv", ["t", "x", "phi", "u"], fine)
fig, axes = plt.subplots(3, 1, figsize=(7, 6), sharex=True)
for ax, col, label in zip(axes, (1, 2, 3), ("cart x (m)", "pendulum phi (rad)", "force u (N)")):
    ax.plot(fine[:, 0], fine[:, col])
    ax.set_ylabel(label)
    ax.grid(alpha=0.3)
axes[0].set_title("MuJoCo closed loop, LQR Q11 = 5000, Q33 = 100, 0.2 m step with Nbar")
axes[2].set_xlabel("time (s)")
fig.tight_layout()
fig.savefig(OUT / "response.png", dpi=100)
