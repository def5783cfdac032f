import json
import os

import mujoco
import numpy as np
import scipy.linalg as sl

print("MuJoCo", mujoco.__version__)
os.makedirs("results", exist_ok=True)
c = json.load(open("inputs.json"))
XML = f"""<mujoco><option gravity="0 0 -9.8"/><worldbody><body name="cart">
<joint name="s" type="slide" axis="1 0 0" damping="{c['friction']}"/>
      <inertial pos="0 0 0" mass="{c['cart_mass']}" diaginertia="1e-3 1e-3 1e-3"/>
<body name="p"><joint name="h" type="hinge" axis="0 1 0"/>
<inertial pos="0 0 {c['com_length']}" mass="{c['pendulum_mass']}" diaginertia="{c['inertia']} {c['inertia']} 1e-6"/>
</body></body></worldbody><actuator><motor joint="s"/></actuator></mujoco>"""
open("results/model.xml", "w").write(XML)
model = mujoco.MjModel.from_xml_string(XML)
data = mujoco.MjData(model)


def f(s, u):
    data.qpos[:] = [s[0], -s[2]]
    data.qvel[:] = [s[1], -s[3]]
    data.ctrl[:] = [u]
    mujoco.mj_forward(model, data)
    return np.array([s[1], data.qacc[0], s[3], -data.qacc[1]])


study = []
for eps in (1e-3, 1e-4, 1e-5, 1e-6):
    A = np.column_stack([(f(e * eps, 0) - f(-e * eps, 0)) / (2 * eps) for e in np.eye(4)])
    B = ((f(np.zeros(4), eps) - f(np.zeros(4), -eps)) / (2 * eps))[:, None]
    study.append({"eps": eps, "A": A.tolist(), "B": B.tolist()})
json.dump({"A": A.tolist(), "B": B.tolist(), "state": ["x", "x_dot", "phi", "phi_dot"], "fd_study": study},
          open("results/linearization.json", "w"), indent=2)
P = sl.solve_continuous_are(A, B, np.diag([1.0, 0, 1, 0]), np.eye(1))
K = (B.T @ P)[0]
poles = np.linalg.eigvals(A)
json.dump({"open_loop_poles": [[p.real, p.imag] for p in poles],
           "designs": [{"Q_diag": [1, 0, 1, 0], "R": 1, "K": K.tolist()}]}, open("results/lqr.json", "w"), indent=2)
print("K =", K)
