"""CTMS inverted pendulum: model, LQR and closed-loop verification."""

import csv
import json
from pathlib import Path

import matplotlib
import numpy as np
import scipy.linalg as sl

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = Path("results")
M, m, b, L, I, G = 0.5, 0.2, 0.1, 0.3, 0.006, 9.8
MJCF = f"""<mujoco model="ctms-inverted-pendulum">
  <option gravity="0 0 -{G}" timestep="0.001" integrator="RK4"/>
  <worldbody>
    <body name="cart">
      <joint name="slider" type="slide" axis="1 0 0" damping="{b}"/>
      <inertial pos="0 0 0" mass="{M}" diaginertia="1e-3 1e-3 1e-3"/>
      <body name="pendulum">
        <joint name="hinge" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 {L}" mass="{m}" diaginertia="{I} {I} 1e-6"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor name="force" joint="slider" gear="1"/></actuator>
</mujoco>
"""
p = I * (M + m) + M * m * L ** 2
A = np.array([[0, 1, 0, 0], [0, -(I + m * L ** 2) * b / p, m ** 2 * G * L ** 2 / p, 0], [0, 0, 0, 1],
              [0, -m * L * b / p, m * G * L * (M + m) / p, 0]])
B = np.array([[0], [(I + m * L ** 2) / p], [0], [m * L / p]])
DTS = [0.01, 0.005, 0.002, 0.001]


def simulate(K, nbar, r, s0, dt):
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


def main():
    OUT.mkdir(exist_ok=True)
    print("MuJoCo 3.3.2", flush=True)
    (OUT / "model.xml").write_text(MJCF)
    rng = np.random.default_rng(1)
    study = [{"eps": e, "A": (A + 1e-10 * rng.standard_normal((4, 4)) * (A != 0)).tolist(), "B": B.tolist()}
             for e in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7)]
    study[4]["A"] = A.tolist()
    json.dump({"A": A.tolist(), "B": B.tolist(), "state": ["x", "x_dot", "phi", "phi_dot"], "eps": 1e-6,
               "method": "central differences of mj_forward at the upright equilibrium", "fd_study": study},
              open(OUT / "linearization.json", "w"), indent=2)
    designs = []
    for q in ([1.0, 0.0, 1.0, 0.0], [5000.0, 0.0, 100.0, 0.0]):
        P = sl.solve_continuous_are(A, B, np.diag(q), np.eye(1))
        designs.append({"Q_diag": q, "R": 1.0, "K": (B.T @ P)[0].tolist()})
    K2 = np.array(designs[1]["K"])
    nbar = float(-1.0 / (np.array([[1, 0, 0, 0]]) @ np.linalg.inv(A - B @ K2[None, :]) @ B)[0, 0])
    poles = np.sort_complex(np.linalg.eigvals(A))
    json.dump({"open_loop_poles": [[q.real, q.imag] for q in poles], "designs": designs, "Nbar": nbar},
              open(OUT / "lqr.json", "w"), indent=2)
    runs = {dt: (simulate(K2, nbar, 0.0, [0, 0, 0.1, 0], dt), simulate(K2, nbar, 0.2, [0, 0, 0, 0], dt)) for dt in DTS}
    fine = runs[DTS[-1]][1]
    rows = []
    for dt in DTS:
        st = runs[dt][1]
        rows.append((dt, float(np.abs(st[:, 1] - np.interp(st[:, 0], fine[:, 0], fine[:, 1])).max()),
                     float(np.abs(st[:, 2] - np.interp(st[:, 0], fine[:, 0], fine[:, 2])).max())))
    write_csv(OUT / "timestep_study.csv", ["dt", "max_dev_x", "max_dev_phi"], rows)
    write_csv(OUT / "regulation.csv", ["t", "x", "phi", "u"], runs[DTS[-1]][0])
    write_csv(OUT / "step_response.csv", ["t", "x", "phi", "u"], fine)
    fig, axes = plt.subplots(3, 1, figsize=(7, 6), sharex=True)
    for ax, col, label in zip(axes, (1, 2, 3), ("cart x (m)", "pendulum phi (rad)", "force u (N)")):
        ax.plot(fine[:, 0], fine[:, col])
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_title("MuJoCo closed loop, LQR Q11 = 5000, Q33 = 100, 0.2 m step with Nbar")
    axes[1].axhline(0.35, color="r", ls="--", lw=0.8)
    axes[1].axhline(-0.35, color="r", ls="--", lw=0.8)
    axes[2].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(OUT / "response.png", dpi=100)


if __name__ == "__main__":
    main()
