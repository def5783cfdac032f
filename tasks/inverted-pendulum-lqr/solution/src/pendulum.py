"""Reference workflow: the CTMS inverted pendulum built in MuJoCo, linearized, LQR-controlled, verified.

A and B come from central finite differences of MuJoCo's forward dynamics at the upright equilibrium
(state x, xdot, phi, phidot with phi = -hinge angle, so phi > 0 when the top moves toward -x).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import matplotlib
import mujoco
import numpy as np
import scipy.linalg as sl

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = Path("results")
# the contract's inputs (instruction.md): the verifier may replay the package with other values
INPUTS = json.loads(Path("inputs.json").read_text())
M, m, b, L, I_CM = (float(INPUTS[k]) for k in ("cart_mass", "pendulum_mass", "friction", "com_length", "inertia"))
G = 9.8
PHI0, STEP = float(INPUTS["phi0"]), float(INPUTS["step"])
MJCF = f"""<mujoco model="ctms-inverted-pendulum">
  <option gravity="0 0 -{G}" timestep="0.001" integrator="RK4"/>
  <worldbody>
    <body name="cart">
      <joint name="slider" type="slide" axis="1 0 0" damping="{b}"/>
      <inertial pos="0 0 0" mass="{M}" diaginertia="1e-3 1e-3 1e-3"/>
      <body name="pendulum">
        <joint name="hinge" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 {L}" mass="{m}" diaginertia="{I_CM} {I_CM} 1e-6"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor name="force" joint="slider" gear="1"/></actuator>
</mujoco>
"""
DESIGNS = [{"Q_diag": [1.0, 0.0, 1.0, 0.0], "R": 1.0}, {"Q_diag": [float(q) for q in INPUTS["Q_diag"]], "R": 1.0}]
DTS = [0.01, 0.005, 0.002, 0.001]
T_END = 6.0


def set_state(model, data, s, u=0.0):
    data.qpos[:] = [s[0], -s[2]]
    data.qvel[:] = [s[1], -s[3]]
    data.ctrl[:] = [u]


def get_state(data) -> np.ndarray:
    return np.array([data.qpos[0], data.qvel[0], -data.qpos[1], -data.qvel[1]])


def dynamics(model, data, s, u) -> np.ndarray:
    set_state(model, data, s, u)
    mujoco.mj_forward(model, data)
    return np.array([s[1], data.qacc[0], s[3], -data.qacc[1]])


def linearize(model, data, eps: float):
    x0 = np.zeros(4)
    A = np.column_stack([(dynamics(model, data, x0 + eps * e, 0) - dynamics(model, data, x0 - eps * e, 0)) / (2 * eps)
                         for e in np.eye(4)])
    B = ((dynamics(model, data, x0, eps) - dynamics(model, data, x0, -eps)) / (2 * eps))[:, None]
    return A, B


def lqr(A, B, q_diag, r):
    Q, R = np.diag(q_diag), np.array([[r]])
    P = sl.solve_continuous_are(A, B, Q, R)
    return (np.linalg.solve(R, B.T @ P))[0]


def simulate(K, nbar, r, s0, dt):
    model = mujoco.MjModel.from_xml_string(MJCF)
    model.opt.timestep = dt
    data = mujoco.MjData(model)
    set_state(model, data, s0)
    mujoco.mj_forward(model, data)
    rows = []
    for i in range(int(round(T_END / dt)) + 1):
        s = get_state(data)
        u = nbar * r - K @ s
        rows.append((i * dt, s[0], s[2], u))
        data.ctrl[:] = [u]
        mujoco.mj_step(model, data)
    return np.array(rows)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows([[f"{v:.10g}" for v in row] for row in rows])


def main() -> None:
    OUT.mkdir(exist_ok=True)
    print(f"MuJoCo {mujoco.__version__}", flush=True)
    (OUT / "model.xml").write_text(MJCF)
    model = mujoco.MjModel.from_xml_string(MJCF)
    data = mujoco.MjData(model)
    study = []
    for eps in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7):
        A_e, B_e = linearize(model, data, eps)
        study.append({"eps": eps, "A": A_e.tolist(), "B": B_e.tolist()})
    A, B = linearize(model, data, 1e-6)
    print("A =\n", np.round(A, 4), "\nB =", np.round(B.ravel(), 4), flush=True)
    json.dump({"A": A.tolist(), "B": B.tolist(), "state": ["x", "x_dot", "phi", "phi_dot"], "eps": 1e-6,
               "method": "central differences of mj_forward at the upright equilibrium", "fd_study": study},
              open(OUT / "linearization.json", "w"), indent=2)

    poles = np.sort_complex(np.linalg.eigvals(A))
    designs = []
    for d in DESIGNS:
        K = lqr(A, B, d["Q_diag"], d["R"])
        designs.append({**d, "K": K.tolist(),
                        "closed_loop_poles": [[p.real, p.imag] for p in np.linalg.eigvals(A - B @ K[None, :])]})
        print(f"Q = diag{d['Q_diag']}: K = {np.round(K, 4)}", flush=True)
    K2 = np.array(designs[1]["K"])
    nbar = float(-1.0 / (np.array([[1, 0, 0, 0]]) @ np.linalg.inv(A - B @ K2[None, :]) @ B)[0, 0])
    print(f"open-loop poles {np.round(poles.real, 4)}; Nbar = {nbar:.4f}", flush=True)
    json.dump({"open_loop_poles": [[p.real, p.imag] for p in poles], "designs": designs, "Nbar": nbar},
              open(OUT / "lqr.json", "w"), indent=2)

    runs = {dt: (simulate(K2, nbar, 0.0, [0, 0, PHI0, 0], dt), simulate(K2, nbar, STEP, [0, 0, 0, 0], dt))
            for dt in DTS}
    finest = runs[DTS[-1]]
    study_rows = []
    for dt in DTS:
        step = runs[dt][1]
        ref = np.interp(step[:, 0], finest[1][:, 0], finest[1][:, 1]), np.interp(step[:, 0], finest[1][:, 0],
                                                                                  finest[1][:, 2])
        study_rows.append((dt, float(np.abs(step[:, 1] - ref[0]).max()), float(np.abs(step[:, 2] - ref[1]).max())))
        print(f"dt = {dt}: max deviation from dt = {DTS[-1]}: x {study_rows[-1][1]:.2e}, phi {study_rows[-1][2]:.2e}")
    write_csv(OUT / "timestep_study.csv", ["dt", "max_dev_x", "max_dev_phi"], study_rows)
    write_csv(OUT / "regulation.csv", ["t", "x", "phi", "u"], finest[0])
    write_csv(OUT / "step_response.csv", ["t", "x", "phi", "u"], finest[1])
    plot(finest[1])


def plot(step) -> None:
    fig, axes = plt.subplots(3, 1, figsize=(7, 6), sharex=True)
    for ax, col, label in zip(axes, (1, 2, 3), ("cart x (m)", "pendulum phi (rad)", "force u (N)"), strict=True):
        ax.plot(step[:, 0], step[:, col])
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].axhline(STEP, color="k", ls=":", lw=0.8)
    axes[0].set_title(f"MuJoCo closed loop, LQR Q11 = {DESIGNS[1]['Q_diag'][0]:g}, Q33 = {DESIGNS[1]['Q_diag'][2]:g}, "
                      f"{STEP:g} m step with Nbar")
    axes[1].axhline(0.35, color="r", ls="--", lw=0.8)
    axes[1].axhline(-0.35, color="r", ls="--", lw=0.8)
    axes[2].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(OUT / "response.png", dpi=100)


if __name__ == "__main__":
    main()
