"""Task checks for inverted-pendulum-lqr (PRIVATE). Poles are recomputed from the submitted A; the
closed-loop trajectories are compared with the reference plant driven by the submitted gains; the
closed-loop leaves are gated on the simulated plant being the CTMS pendulum. Whether the numbers are
MuJoCo's for the delivered model is recomputed by the scorer in MuJoCo (tests/recompute.py); the package
carries code, not stored results (check kind ``delivered_size``)."""

from __future__ import annotations

import numpy as np

from workbench.evidence import MissingEvidence
from workbench.scoring import CheckOutcome, task_check

M, m, b, L, I_CM, G = 0.5, 0.2, 0.1, 0.3, 0.006, 9.8
_p = I_CM * (M + m) + M * m * L ** 2
A_REF = np.array([[0, 1, 0, 0], [0, -(I_CM + m * L ** 2) * b / _p, m ** 2 * G * L ** 2 / _p, 0], [0, 0, 0, 1],
                  [0, -m * L * b / _p, m * G * L * (M + m) / _p, 0]])
B_REF = np.array([0, (I_CM + m * L ** 2) / _p, 0, m * L / _p])
LIN, LQR = "results/linearization.json", "results/lqr.json"


def _result(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(float(bool(ok)), ("pass: " if ok else "fail: ") + text, refs)


def _matrices(ev) -> tuple[np.ndarray, np.ndarray]:
    d = ev.read_json(LIN)
    try:
        A = np.array(d["A"], dtype=float).reshape(4, 4)
        B = np.array(d["B"], dtype=float).reshape(4)
    except (KeyError, TypeError, ValueError):
        raise MissingEvidence(f"submission/{LIN}", "no 4x4 A and 4x1 B") from None
    return A, B


def _design(ev, q_diag: list[float]) -> np.ndarray:
    for d in ev.read_json(LQR).get("designs", []):
        if np.allclose(np.array(d.get("Q_diag", []), dtype=float), q_diag) and float(d.get("R", 0)) == 1.0:
            return np.array(d["K"], dtype=float).reshape(4)
    raise MissingEvidence(f"submission/{LQR}", f"no design with Q_diag {q_diag}, R = 1")


def _trajectory(ev, name: str):
    df = ev.read_csv(f"results/{name}.csv")
    for col in ("t", "x", "phi", "u"):
        if col not in df.columns:
            raise MissingEvidence(f"submission/results/{name}.csv:{col}", "column not found")
    return df


def _simulate_reference(K: np.ndarray, nbar: float, r: float, x0, t: np.ndarray) -> np.ndarray:
    """The reference linear plant under u = nbar r - K x, RK4 on the submission's time grid."""
    f = lambda x: A_REF @ x + B_REF * (nbar * r - K @ x)  # noqa: E731
    out, x = [np.array(x0, float)], np.array(x0, float)
    for dt in np.diff(t):
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(x)
    return np.array(out)


@task_check
def b_vector(ev, rel_tol: float = 0.01) -> CheckOutcome:
    _, B = _matrices(ev)
    ok = abs(B[0]) < 1e-6 and abs(B[2]) < 1e-6 and np.allclose(B[[1, 3]], B_REF[[1, 3]], rtol=rel_tol)
    return _result(ok, f"B = {np.round(B, 4).tolist()} vs {np.round(B_REF, 4).tolist()}", [f"submission/{LIN}"])


@task_check
def designs_as_specified(ev) -> CheckOutcome:
    try:
        _design(ev, [1, 0, 1, 0])
        _design(ev, [5000, 0, 100, 0])
        return _result(True, "both LQR weightings present", [f"submission/{LQR}"])
    except MissingEvidence as miss:
        return _result(False, str(miss), [f"submission/{LQR}"])


@task_check
def fd_converged(ev, min_steps: int = 4, rel_tol: float = 1e-6) -> CheckOutcome:
    """The finite-difference study has >= 4 steps, two successive ones agree, and A is one of them."""
    d = ev.read_json(LIN)
    study = d.get("fd_study") or []
    A, B = _matrices(ev)
    mats = []
    for s in study:
        try:
            mats.append((float(s["eps"]), np.array(s["A"], float).reshape(4, 4), np.array(s["B"], float).reshape(4)))
        except (KeyError, TypeError, ValueError):
            return _result(False, "malformed fd_study entry", [f"submission/{LIN}"])
    scale = max(np.abs(A).max(), 1.0)
    agree = [abs(e1 - e2) >= 0 and np.abs(a1 - a2).max() <= rel_tol * scale
             for (e1, a1, _), (e2, a2, _) in zip(mats, mats[1:], strict=False)]
    used = any(np.abs(a - A).max() <= 1e-9 * scale and np.abs(bb - B).max() <= 1e-9 * scale for _, a, bb in mats)
    ok = len(mats) >= min_steps and any(agree) and used
    return _result(ok, f"{len(mats)} steps; successive agreement {agree}; reported A from the study: {used}",
                   [f"submission/{LIN}"])


@task_check
def timestep_converged(ev, min_steps: int = 3) -> CheckOutcome:
    df = ev.read_csv("results/timestep_study.csv")
    for col in ("dt", "max_dev_x", "max_dev_phi"):
        if col not in df.columns:
            raise MissingEvidence(f"submission/results/timestep_study.csv:{col}", "column not found")
    df = df.sort_values("dt", ascending=False)
    dev = df["max_dev_x"].to_numpy(float)
    ok = len(df) >= min_steps and bool(np.all(np.diff(dev) < 0)) and dev[-1] == 0 and df["dt"].min() <= 0.002
    return _result(ok, f"dt {df['dt'].tolist()}: max |x - x_finest| {np.round(dev, 6).tolist()}",
                   ["submission/results/timestep_study.csv"])


@task_check
def open_loop_poles(ev, targets: list[float], abs_tol: float) -> CheckOutcome:
    A, _ = _matrices(ev)
    poles = np.sort(np.linalg.eigvals(A).real)
    ok = len(poles) == 4 and np.allclose(poles, np.sort(targets), atol=abs_tol)
    return _result(ok, f"eig(A) = {np.round(poles, 4).tolist()} vs {targets}", [f"submission/{LIN}"])


@task_check
def one_unstable_pole(ev) -> CheckOutcome:
    A, _ = _matrices(ev)
    n = int((np.linalg.eigvals(A).real > 1e-6).sum())
    return _result(n == 1, f"{n} open-loop pole(s) in the right half plane", [f"submission/{LIN}"])


@task_check
def gains(ev, q_diag: list[float], target: list[float], rel_tol: float) -> CheckOutcome:
    K = _design(ev, q_diag)
    ok = np.allclose(K, target, rtol=rel_tol)
    return _result(ok, f"K = {np.round(K, 4).tolist()} vs {target}", [f"submission/{LQR}"])


@task_check
def plant_is_ctms(ev, rel_tol: float = 0.01) -> CheckOutcome:
    """Gate: the simulated plant's linearization is the CTMS pendulum (else closed-loop results prove nothing)."""
    A, B = _matrices(ev)
    ok = np.allclose(A, A_REF, rtol=rel_tol, atol=1e-6) and np.allclose(B, B_REF, rtol=rel_tol, atol=1e-6)
    worst = float(max(np.abs(A - A_REF).max(), np.abs(B - B_REF).max()))
    return _result(ok, f"largest deviation of A, B from the CTMS model {worst:.3g}", [f"submission/{LIN}"])


@task_check
def regulation(ev, after_s: float = 5.0, tol: float = 1e-3) -> CheckOutcome:
    df = _trajectory(ev, "regulation")
    late = df[df["t"] >= after_s]
    ok = df["t"].max() >= 6.0 - 1e-9 and abs(df["phi"].iloc[0] - 0.1) < 1e-9 and not late.empty and \
        float(late["x"].abs().max()) < tol and float(late["phi"].abs().max()) < tol
    return _result(ok, f"from phi(0) = {df['phi'].iloc[0]:.3g}: after {after_s} s max |x| "
                       f"{late['x'].abs().max():.2e}, |phi| {late['phi'].abs().max():.2e}",
                   ["submission/results/regulation.csv"])


def _settling_time(t: np.ndarray, err: np.ndarray, band: float) -> float:
    """First time after which |err| stays within band (inf if it never settles)."""
    out = np.nonzero(np.abs(err) > band)[0]
    if not len(out):
        return 0.0
    return float(t[out[-1] + 1]) if out[-1] + 1 < len(t) else float("inf")


@task_check
def requirements(ev, r: float = 0.2) -> CheckOutcome:
    """The tutorial's requirements on the raw MuJoCo step response: settling < 5 s, rise < 0.5 s,
    |phi| < 0.35 rad, steady-state error < 2 %."""
    df = _trajectory(ev, "step_response")
    t, x, phi = df["t"].to_numpy(float), df["x"].to_numpy(float), df["phi"].to_numpy(float)
    settle, settle_phi = _settling_time(t, x - r, 0.02 * r), _settling_time(t, phi, 0.02 * 0.35)
    rise = t[np.argmax(x >= 0.9 * r)] - t[np.argmax(x >= 0.1 * r)] if (x >= 0.9 * r).any() else np.inf
    ess = abs(x[-1] - r) / r
    ok = settle < 5 and settle_phi < 5 and rise < 0.5 and np.abs(phi).max() < 0.35 and ess < 0.02
    return _result(ok, f"settling x {settle:.2f} s, phi {settle_phi:.2f} s, rise {rise:.3f} s, "
                       f"max |phi| {np.abs(phi).max():.3f} rad, steady-state error {100 * ess:.2f} %",
                   ["submission/results/step_response.csv"])


@task_check
def matches_linear_design(ev, x_tol: float = 0.015, phi_tol: float = 0.02) -> CheckOutcome:
    """The MuJoCo trajectories follow the reference linear plant under the submitted K and Nbar."""
    K = _design(ev, [5000, 0, 100, 0])
    nbar = float(ev.read_json(LQR).get("Nbar", np.nan))
    worst = []
    for name, r, x0 in (("step_response", 0.2, [0, 0, 0, 0]), ("regulation", 0.0, [0, 0, 0.1, 0])):
        df = _trajectory(ev, name)
        t = df["t"].to_numpy(float)
        lin = _simulate_reference(K, nbar, r, x0, t)
        worst.append((float(np.abs(lin[:, 0] - df["x"]).max()), float(np.abs(lin[:, 2] - df["phi"]).max())))
    dx, dphi = max(w[0] for w in worst), max(w[1] for w in worst)
    return _result(dx <= x_tol and dphi <= phi_tol, f"max deviation from the reference linear closed loop: "
                   f"x {dx:.4f} m (tol {x_tol}), phi {dphi:.4f} rad (tol {phi_tol})",
                   ["submission/results/step_response.csv", "submission/results/regulation.csv"])


@task_check
def nonlinearity_resolved(ev, min_dx: float = 0.002, min_dphi: float = 0.003) -> CheckOutcome:
    """The step response departs from the reference linear closed loop (same K and Nbar) by at least
    ``min_dx`` in x and ``min_dphi`` in phi: the swing to ~0.16 rad makes the nonlinear plant's cart run
    ~5 mm from the linear one's; a linear model (continuous or zero-order hold at 1 ms) stays far closer."""
    K = _design(ev, [5000, 0, 100, 0])
    nbar = float(ev.read_json(LQR).get("Nbar", np.nan))
    df = _trajectory(ev, "step_response")
    t = df["t"].to_numpy(float)
    lin = _simulate_reference(K, nbar, 0.2, [0, 0, 0, 0], t)
    dx, dphi = float(np.abs(lin[:, 0] - df["x"]).max()), float(np.abs(lin[:, 2] - df["phi"]).max())
    ok = dx >= min_dx and dphi >= min_dphi
    return _result(ok, f"step response vs the linear closed loop: max |dx| {dx * 1e3:.2f} mm (need >= "
                       f"{min_dx * 1e3:g}), |dphi| {dphi * 1e3:.2f} mrad (need >= {min_dphi * 1e3:g})",
                   ["submission/results/step_response.csv"])
