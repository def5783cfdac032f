"""Scorer-side spot recomputation for inverted-pendulum-lqr (PRIVATE; runs in the task's MuJoCo environment,
confined).

Both functions load the submission's own ``results/model.xml`` in MuJoCo and redo, on it, what the
submission declares it did; they do not judge the physics (whether the model is the CTMS pendulum is the
rubric's business), only whether the submitted numbers are that model's:

``linear_design``: every ``fd_study`` entry of linearization.json is recomputed here by central (or
forward) differences of MuJoCo's continuous-time dynamics (``mj_forward``'s qacc) at the declared step,
in the task's state convention (x, x_dot, phi, phi_dot; phi > 0 when the top moves toward -x), and each
LQR gain and Nbar is recomputed by CARE from the submitted A and B. At a coarse step (1e-2, 1e-3) central
differences of the nonlinear plant differ from the exact Jacobian by O(eps^2), so a study typed in from
the analytic matrices disagrees with MuJoCo's own differences there.

``closed_loops``: the regulation (phi(0) = 0.1 rad, r = 0) and the 0.2 m step (from rest) are
re-simulated here in MuJoCo with the submitted K and Nbar (u = Nbar r - K x from the state at the start
of each step, held over the step) at the finest declared time step with the model's own integrator, and
compared sample by sample with the submitted x and phi; every row of timestep_study.csv is re-simulated
at its time step and its deviations recomputed. A linear model, a nonlinear stand-in integrated by other
code, a coarser run interpolated onto a finer grid or a study typed in miss by orders of magnitude more
than the tolerance (a faithful submission agrees to ~1e-10, the CSV's rounding).

Both take ``replay``: ``"public"`` reads submission/results and the published inputs; ``"secret"`` reads
the second replay's secret/submission/results, which got inputs drawn for it alone
(secret/replay/input/inputs.json: the pendulum's parameters, the second design's Q, phi(0) and the step).
For the secret replay they also require that the replay follows the drawn inputs: the linearization
equals the analytic CTMS matrices of the drawn parameters within 1 % (so model.xml carries them), the
second design is the drawn Q, and every output the public replay delivered is there again. A cache, or
results typed in for the published values, cannot follow drawn masses, lengths and weights.

Runs without the workbench: only the standard library, NumPy, SciPy and MuJoCo.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np

MAX_BYTES = 4 << 20
MAX_STEPS = 200_000
PUBLISHED = {"cart_mass": 0.5, "pendulum_mass": 0.2, "friction": 0.1, "com_length": 0.3, "inertia": 0.006,
             "Q_diag": [5000.0, 0.0, 100.0, 0.0], "phi0": 0.1, "step": 0.2}
G = 9.8
OUTPUTS = ("model.xml", "linearization.json", "lqr.json", "regulation.csv", "step_response.csv",
           "timestep_study.csv")


def _prefix(replay: str) -> str:
    if replay not in ("public", "secret"):
        raise ValueError(f"replay {replay!r}")
    return "secret" if replay == "secret" else ""


def _results(evidence: Path, replay: str = "public") -> Path:
    return Path(evidence) / _prefix(replay) / "submission" / "results"


def _inputs(evidence: Path, replay: str = "public") -> dict:
    p = Path(evidence) / _prefix(replay) / "replay" / "input" / "inputs.json"
    cfg = dict(PUBLISHED)
    if p.is_file():
        cfg.update(json.loads(p.read_text()))
    return cfg


def analytic(cfg: dict) -> tuple[np.ndarray, np.ndarray]:
    """The CTMS state-space matrices (x, x_dot, phi, phi_dot) of the given parameters."""
    M, m, b, L, I = (float(  # noqa: E741 (I: the pendulum's moment of inertia, as in the CTMS model)
        cfg[k]) for k in ("cart_mass", "pendulum_mass", "friction", "com_length", "inertia"))
    p = I * (M + m) + M * m * L ** 2
    A = np.array([[0, 1, 0, 0], [0, -(I + m * L ** 2) * b / p, m ** 2 * G * L ** 2 / p, 0], [0, 0, 0, 1],
                  [0, -m * L * b / p, m * G * L * (M + m) / p, 0]])
    return A, np.array([0, (I + m * L ** 2) / p, 0, m * L / p])


def _missing_again(evidence: Path) -> list[str]:
    """The outputs the public replay delivered that the secret replay did not."""
    pub, sec = _results(evidence), _results(evidence, "secret")
    return [n for n in OUTPUTS if (pub / n).is_file() and not (sec / n).is_file()]


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"{path.name}: larger than {MAX_BYTES >> 20} MB")
    return path.read_text(encoding="utf-8", errors="replace")


class Plant:
    """The submitted MJCF with the task's state convention mapped onto its two joints."""

    def __init__(self, results: Path):
        import mujoco

        self.mj = mujoco
        path = results / "model.xml"
        if not path.is_file():
            raise ValueError("no results/model.xml")
        self.model = mujoco.MjModel.from_xml_string(_read(path))
        m = self.model
        if m.nq != 2 or m.nv != 2 or m.nu < 1:
            raise ValueError(f"model.xml has nq = {m.nq}, nv = {m.nv}, nu = {m.nu} (need a slide joint, a hinge "
                             "and a force actuator)")
        types = list(m.jnt_type)
        slide, hinge = int(mujoco.mjtJoint.mjJNT_SLIDE), int(mujoco.mjtJoint.mjJNT_HINGE)
        if sorted(types) != sorted([slide, hinge]):
            raise ValueError("model.xml's joints are not one slide joint and one hinge")
        js, jh = types.index(slide), types.index(hinge)
        self.qs, self.qh = int(m.jnt_qposadr[js]), int(m.jnt_qposadr[jh])
        self.vs, self.vh = int(m.jnt_dofadr[js]), int(m.jnt_dofadr[jh])
        self.data = mujoco.MjData(m)
        d = self.data
        # phi = sign * hinge angle, with phi > 0 when the pendulum's center of mass moves toward -x
        body = int(m.jnt_bodyid[jh])
        mujoco.mj_kinematics(m, d)
        x0, z0, zpivot = float(d.xipos[body][0]), float(d.xipos[body][2]), float(d.xanchor[jh][2])
        if z0 <= zpivot:
            raise ValueError("at qpos = 0 the pendulum's center of mass is not above its hinge (qpos = 0 must be "
                             "the upright equilibrium)")
        d.qpos[self.qh] = 1e-3
        mujoco.mj_kinematics(m, d)
        self.sign = 1.0 if float(d.xipos[body][0]) < x0 else -1.0
        d.qpos[:] = 0

    def set(self, s, u=0.0) -> None:
        d = self.data
        d.qpos[:] = 0
        d.qvel[:] = 0
        d.qpos[self.qs], d.qpos[self.qh] = s[0], self.sign * s[2]
        d.qvel[self.vs], d.qvel[self.vh] = s[1], self.sign * s[3]
        d.ctrl[:] = 0
        d.ctrl[0] = u
        d.time = 0.0
        if self.model.na:
            d.act[:] = 0

    def state(self) -> np.ndarray:
        d = self.data
        return np.array([d.qpos[self.qs], d.qvel[self.vs], self.sign * d.qpos[self.qh], self.sign * d.qvel[self.vh]])

    def f(self, s, u) -> np.ndarray:
        self.set(s, u)
        self.mj.mj_forward(self.model, self.data)
        a = self.data.qacc
        return np.array([s[1], a[self.vs], s[3], self.sign * a[self.vh]])

    def jacobians(self, eps: float, central: bool) -> tuple[np.ndarray, np.ndarray]:
        z = np.zeros(4)
        lo = (lambda e: self.f(-e, 0.0)) if central else (lambda e: self.f(z, 0.0))
        h = 2 * eps if central else eps
        A = np.column_stack([(self.f(eps * e, 0.0) - lo(eps * e)) / h for e in np.eye(4)])
        B = (self.f(z, eps) - (self.f(z, -eps) if central else self.f(z, 0.0))) / h
        return A, B

    def closed_loop(self, K, nbar, r, s0, dt, t_end) -> np.ndarray:
        """Rows (t, x, phi) of u = nbar r - K x held over each MuJoCo step of dt."""
        n = int(round(t_end / dt))
        if not 0 < n <= MAX_STEPS:
            raise ValueError(f"{n} steps of {dt:g} s")
        m, d = self.model, self.data
        saved = m.opt.timestep
        m.opt.timestep = dt
        try:
            self.set(s0)
            self.mj.mj_forward(m, d)
            rows = np.empty((n + 1, 3))
            for i in range(n + 1):
                s = self.state()
                rows[i] = (i * dt, s[0], s[2])
                d.ctrl[0] = nbar * r - float(K @ s)
                self.mj.mj_step(m, d)
        finally:
            m.opt.timestep = saved
        return rows


def _lin(results: Path) -> dict:
    d = json.loads(_read(results / "linearization.json"))
    if not isinstance(d, dict):
        raise ValueError("linearization.json is not an object")
    return d


def _lqr(results: Path) -> dict:
    d = json.loads(_read(results / "lqr.json"))
    if not isinstance(d, dict):
        raise ValueError("lqr.json is not an object")
    return d


def _design(lqr: dict, q_diag) -> np.ndarray | None:
    for d in lqr.get("designs") or []:
        if not isinstance(d, dict):
            continue
        q = np.array(d.get("Q_diag", []), float).ravel()
        if q.shape == (4,) and np.allclose(q, q_diag) and float(d.get("R", 0)) == 1.0:
            return np.array(d["K"], float).reshape(4)
    return None


def _fail(text: str) -> dict:
    return {"score": 0.0, "rationale": "fail: " + text}


def linear_design(evidence: Path, fd_atol: float = 1e-6, k_rtol: float = 1e-6, replay: str = "public",
                  plant_rtol: float = 0.01) -> dict:
    """Score 1 when every fd_study entry is MuJoCo's own finite difference of the submitted model.xml at
    its declared step (central or forward; within ``fd_atol`` times the matrices' scale), and every LQR
    gain and Nbar equals CARE's from the submitted A and B (within ``k_rtol``). For the secret replay, A
    and B must also be the analytic CTMS matrices of the drawn parameters (within ``plant_rtol``) and the
    public replay's outputs must all be there again."""
    import scipy.linalg as sl

    results = _results(evidence, replay)
    cfg = _inputs(evidence, replay)
    q2 = [float(q) for q in cfg["Q_diag"]]
    if replay == "secret" and (gone := _missing_again(evidence)):
        return _fail(f"the secret replay did not deliver {gone}, which the public replay did")
    try:
        plant = Plant(results)
        lin, lqr = _lin(results), _lqr(results)
        A = np.array(lin["A"], float).reshape(4, 4)
        B = np.array(lin["B"], float).reshape(4, 1)
        study = [(float(s["eps"]), np.array(s["A"], float).reshape(4, 4), np.array(s["B"], float).reshape(4))
                 for s in lin.get("fd_study") or []]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return _fail(f"cannot read the submitted model or matrices: {exc}")
    if not study:
        return _fail("linearization.json has no fd_study to recompute")
    notes, ok = [], True
    for eps, a_sub, b_sub in study:
        if not 0 < eps < 1:
            return _fail(f"fd_study step {eps!r} is not in (0, 1)")
        scale = max(1.0, float(np.abs(a_sub).max()), float(np.abs(b_sub).max()))
        worst = min(max(float(np.abs(a - a_sub).max()), float(np.abs(b - b_sub).max()))
                    for a, b in (plant.jacobians(eps, True), plant.jacobians(eps, False)))
        good = worst <= fd_atol * scale
        ok &= good
        notes.append(f"eps {eps:g}: {worst:.1e}{'' if good else ' (differs)'}")
    text = "fd_study vs MuJoCo's own differences of model.xml (largest difference per step, tolerance " \
           f"{fd_atol:g} x scale): " + ", ".join(notes)
    if replay == "secret":
        a_ref, b_ref = analytic(cfg)
        dev = max(float(np.max(np.abs(A - a_ref) / np.maximum(np.abs(a_ref), 1e-6 / plant_rtol))),
                  float(np.max(np.abs(B.ravel() - b_ref) / np.maximum(np.abs(b_ref), 1e-6 / plant_rtol))))
        good = dev <= plant_rtol
        ok &= good
        text = f"secret inputs {json.dumps(cfg)}: A, B vs the analytic CTMS matrices of the drawn parameters " \
               f"{dev:.1e} relative (tolerance {plant_rtol:g}){'' if good else ' (not the drawn pendulum)'}; " + text
        try:  # the designs the public replay delivered must be there again, the second with the drawn Q
            pub = _lqr(_results(evidence))
            pub_q = [float(q) for q in _inputs(evidence)["Q_diag"]]
            want = [i for i, q in enumerate(([1, 0, 1, 0], pub_q)) if _design(pub, q) is not None]
        except (OSError, ValueError, KeyError, TypeError):
            want = []
        missing = [("Q = C'C", f"Q_diag {q2}")[i] for i in want if _design(lqr, ([1, 0, 1, 0], q2)[i]) is None]
        if missing:
            ok = False
            text += f"; lqr.json has no design for {', '.join(missing)} (the public replay delivered it)"
    gains = []
    for q in ([1, 0, 1, 0], q2):
        try:
            K = _design(lqr, q)
        except (KeyError, TypeError, ValueError):
            return _fail(f"{text}; design {q} has no 4-entry K")
        if K is None:
            continue
        try:
            P = sl.solve_continuous_are(A, B, np.diag(np.array(q, float)), np.eye(1))
        except (ValueError, np.linalg.LinAlgError) as exc:
            return _fail(f"{text}; CARE has no solution for the submitted A, B: {exc}")
        ref = (B.T @ P)[0]
        rel = float(np.abs(K - ref).max() / np.abs(ref).max())
        good = rel <= k_rtol
        ok &= good
        gains.append(f"Q_diag {q}: K vs CARE {rel:.1e}")
        if q is q2 and lqr.get("Nbar") is not None:
            try:
                nbar = float(lqr["Nbar"])
                nref = float(-1.0 / (np.array([[1.0, 0, 0, 0]]) @ np.linalg.inv(A - B @ K[None, :]) @ B)[0, 0])
            except (TypeError, ValueError, np.linalg.LinAlgError) as exc:
                return _fail(f"{text}; Nbar not recomputable: {exc}")
            nrel = abs(nbar - nref) / abs(nref)
            ok &= nrel <= k_rtol
            gains.append(f"Nbar vs -1/(C (A - BK)^-1 B) {nrel:.1e}")
    text += "; " + ("; ".join(gains) if gains else "no LQR design to recompute") + f" (tolerance {k_rtol:g})"
    pre = "secret/" if replay == "secret" else ""
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + text,
            "refs": [f"{pre}submission/results/{n}" for n in ("model.xml", "linearization.json", "lqr.json")]}


def _table(path: Path, cols: tuple[str, ...]) -> np.ndarray:
    rows = list(csv.DictReader(io.StringIO(_read(path))))
    if not rows:
        raise ValueError(f"{path.name}: no rows")
    out = np.array([[float((r.get(c) or "nan").strip()) for c in cols] for r in
                    ({(k or "").strip(): v for k, v in row.items()} for row in rows)])
    if not np.isfinite(out).all():
        raise ValueError(f"{path.name}: missing or non-finite values in {cols}")
    return out


def closed_loops(evidence: Path, atol: float = 1e-6, study_rtol: float = 0.02, t_end: float = 6.0,
                 replay: str = "public") -> dict:
    """Score 1 when every submitted trajectory (regulation.csv, step_response.csv) and every row of
    timestep_study.csv is what MuJoCo gives for the submitted model.xml under the submitted K and Nbar
    (trajectories within ``atol`` in x and phi; study deviations within ``study_rtol``). A submission with
    none of these files has nothing to recompute (its leaves on them fail on their own); the secret replay
    must deliver again what the public one did."""
    results = _results(evidence, replay)
    cfg = _inputs(evidence, replay)
    RUNS = {"regulation": (0.0, [0.0, 0.0, float(cfg["phi0"]), 0.0]),  # noqa: N806
            "step_response": (float(cfg["step"]), [0.0, 0.0, 0.0, 0.0])}
    if replay == "secret" and (gone := _missing_again(evidence)):
        return _fail(f"the secret replay did not deliver {gone}, which the public replay did")
    present = [n for n in ("regulation", "step_response", "timestep_study") if (results / f"{n}.csv").is_file()]
    if not present:
        return {"score": 1.0, "rationale": "pass: no closed-loop outputs to recompute"}
    try:
        plant = Plant(results)
        lqr = _lqr(results)
        K = _design(lqr, [float(q) for q in cfg["Q_diag"]])
        nbar = float(lqr["Nbar"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return _fail(f"cannot rebuild the closed loop from model.xml and lqr.json: {exc}")
    if K is None or not np.isfinite(K).all() or not np.isfinite(nbar):
        return _fail(f"lqr.json has no finite K for Q_diag {cfg['Q_diag']} or no Nbar")
    try:
        study = _table(results / "timestep_study.csv", ("dt", "max_dev_x", "max_dev_phi")) \
            if "timestep_study" in present else None
        trajs = {n: _table(results / f"{n}.csv", ("t", "x", "phi")) for n in RUNS if n in present}
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    if study is not None:
        dts = sorted({float(d) for d in study[:, 0]})
        if not dts or dts[0] <= 0:
            return _fail(f"time steps {dts}")
        fine = dts[0]
    else:
        t = next(iter(trajs.values()))[:, 0]
        fine = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
        if fine <= 0:
            return _fail("the trajectory's time grid does not increase")
    notes, ok = [], True
    try:
        ref = {n: plant.closed_loop(K, nbar, r, s0, fine, t_end) for n, (r, s0) in RUNS.items()}
        for n, sub in trajs.items():
            t = sub[:, 0]
            if t[0] < -1e-12 or t[-1] > t_end + 1e-9 or np.any(np.diff(t) <= 0):
                ok = False
                notes.append(f"{n}: time grid {t[0]:g}..{t[-1]:g} s not increasing within [0, {t_end:g}]")
                continue
            dx = float(np.abs(np.interp(t, ref[n][:, 0], ref[n][:, 1]) - sub[:, 1]).max())
            dphi = float(np.abs(np.interp(t, ref[n][:, 0], ref[n][:, 2]) - sub[:, 2]).max())
            good = dx <= atol and dphi <= atol
            ok &= good
            notes.append(f"{n}: {len(t)} samples vs MuJoCo at dt = {fine:g} s: max |dx| {dx:.1e} m, |dphi| "
                         f"{dphi:.1e} rad")
        if study is not None:
            finest = {n: ref[n] for n in RUNS}
            dev_notes = []
            for dt, sx, sphi in study:
                good = False
                for n, (r, s0) in RUNS.items():
                    run = finest[n] if dt == fine else plant.closed_loop(K, nbar, r, s0, float(dt), t_end)
                    ex = float(np.abs(run[:, 1] - np.interp(run[:, 0], finest[n][:, 0], finest[n][:, 1])).max())
                    ephi = float(np.abs(run[:, 2] - np.interp(run[:, 0], finest[n][:, 0], finest[n][:, 2])).max())
                    if abs(sx - ex) <= study_rtol * ex + 1e-9 and abs(sphi - ephi) <= study_rtol * ephi + 1e-9:
                        good = True
                        break
                ok &= good
                dev_notes.append(f"dt {dt:g}: submitted {sx:.3g} m / {sphi:.3g} rad, recomputed ({n}) {ex:.3g} m"
                                 f" / {ephi:.3g} rad{'' if good else ' (differs)'}")
            notes.append("timestep_study: " + ", ".join(dev_notes))
    except (ValueError, RuntimeError) as exc:
        return _fail(f"re-simulation failed: {exc}")
    pre = "secret/" if replay == "secret" else ""
    where = f"secret inputs phi0 {cfg['phi0']:g}, step {cfg['step']:g}, Q_diag {cfg['Q_diag']}: " if pre else ""
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + where + "; ".join(notes) +
            f" (tolerance {atol:g} on trajectories, {100 * study_rtol:g} % on the study)",
            "refs": [f"{pre}submission/results/model.xml", f"{pre}submission/results/lqr.json"] +
            [f"{pre}submission/results/{n}.csv" for n in present]}
