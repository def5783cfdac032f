"""Task checks for rf-lowpass-filter (PRIVATE). The scorer reads the raw Touchstone files the replay
regenerated and recomputes insertion loss, losslessness and the analytic comparison itself, so a
design.json that repeats the book's numbers earns nothing unless the simulated two-port agrees.

Three root-level gates (rubric P1-P3) decide whether any of that counts: the Touchstone files were written
by a process that loaded scikit-rf (execution receipts), the cascade of the declared ladder reproduces
them (tests/recompute.py), and the package carries code, not stored results (check kind
``delivered_size``)."""

from __future__ import annotations

import math

import numpy as np

from workbench.evidence import MissingEvidence
from workbench.scoring import CheckOutcome, task_check

FC, R0 = 2e9, 50.0
UNITS = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}


def _result(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(float(bool(ok)), ("pass: " if ok else "fail: ") + text, refs)


def read_s2p(ev, path: str) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies in Hz, S[f, 2, 2]) from a Touchstone v1 two-port file (RI, MA or DB)."""
    unit, fmt, numbers = "ghz", "ma", []
    for line in ev.read_text(path).splitlines():
        line = line.split("!", 1)[0].strip()
        if not line:
            continue
        if line.startswith("#"):
            opts = line[1:].lower().split()
            unit = next((o for o in opts if o in UNITS), unit)
            fmt = next((o for o in opts if o in ("ri", "ma", "db")), fmt)
            continue
        numbers.extend(float(x) for x in line.split())
    if not numbers or len(numbers) % 9:
        raise MissingEvidence(f"submission/{path}", "is not a two-port Touchstone file")
    a = np.array(numbers).reshape(-1, 9)
    f = a[:, 0] * UNITS[unit]
    x, y = a[:, 1::2], a[:, 2::2]
    if fmt == "ri":
        s = x + 1j * y
    elif fmt == "ma":
        s = x * np.exp(1j * np.deg2rad(y))
    else:
        s = 10 ** (x / 20) * np.exp(1j * np.deg2rad(y))
    # Touchstone v1 two-port order: S11, S21, S12, S22
    return f, np.stack([np.stack([s[:, 0], s[:, 2]], -1), np.stack([s[:, 1], s[:, 3]], -1)], -2)


def _il(ev, which: str) -> tuple[np.ndarray, np.ndarray, str]:
    path = f"results/{which}.s2p"
    f, s = read_s2p(ev, path)
    return f, -20 * np.log10(np.maximum(np.abs(s[:, 1, 0]), 1e-300)), f"submission/{path}"


def _at(f, il, freq) -> float:
    i = int(np.argmin(np.abs(f - freq)))
    if abs(f[i] - freq) > 1e6:
        raise MissingEvidence("s2p", f"no simulated point within 1 MHz of {freq / 1e9:g} GHz")
    return float(il[i])


def maxflat_g(n: int) -> list[float]:
    return [2 * math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]


def equiripple_g(n: int, ripple_db: float) -> list[float]:
    beta = math.log(1 / math.tanh(ripple_db * math.log(10) / 40))
    gamma = math.sinh(beta / (2 * n))
    a = [math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]
    b = [gamma ** 2 + math.sin(k * math.pi / n) ** 2 for k in range(1, n + 1)]
    g = [2 * a[0] / gamma]
    for k in range(2, n + 1):
        g.append(4 * a[k - 2] * a[k - 1] / (b[k - 2] * g[k - 2]))
    return g


def _design(ev, which: str) -> dict:
    d = ev.read_json("results/design.json")
    if not isinstance(d, dict) or not isinstance(d.get(which), dict):
        raise MissingEvidence(f"submission/results/design.json:{which}", "missing")
    return d[which]


@task_check
def prototype(ev, which: str, rel_tol: float = 1e-3) -> CheckOutcome:
    """The design's g values equal the closed-form prototype of its family for N = 5."""
    d = _design(ev, which)
    want = maxflat_g(5) if which == "maxflat" else equiripple_g(5, 3.0)
    got = [float(x) for x in d.get("g", [])]
    ok = len(got) == 5 and all(math.isclose(a, b, rel_tol=rel_tol) for a, b in zip(got, want, strict=False))
    return _result(ok, f"g = {[round(x, 4) for x in got]} vs {[round(x, 4) for x in want]}",
                   ["submission/results/design.json"])


@task_check
def component(ev, which: str, name: str, kind: str, target: float, rel_tol: float) -> CheckOutcome:
    """A component's kind and SI value (farads or henries), e.g. C1 = 0.984e-12 F."""
    parts = {p.get("name"): p for p in _design(ev, which).get("components", []) if isinstance(p, dict)}
    p = parts.get(name)
    if p is None:
        return _result(False, f"no component {name} in {which}", ["submission/results/design.json"])
    value = float(p.get("value", float("nan")))
    ok = p.get("kind") == kind and math.isclose(value, target, rel_tol=rel_tol)
    return _result(ok, f"{which} {name}: {p.get('kind')} {value:.4g} vs {kind} {target:.4g} (±{rel_tol:.1%})",
                   ["submission/results/design.json"])


@task_check
def touchstone_grid(ev, f_max_ghz: float = 6.0, max_step_mhz: float = 5.0) -> CheckOutcome:
    """Both two-ports were simulated on a uniform grid to 6 GHz, fine enough, containing 2 and 3 GHz."""
    problems, refs = [], []
    for which in ("maxflat", "equiripple"):
        f, _, ref = _il(ev, which)
        refs.append(ref)
        steps = np.diff(f)
        if f.max() < f_max_ghz * 1e9 - 1e6 or steps.max() > max_step_mhz * 1e6 + 1 or \
                np.ptp(steps) > 1e-6 * steps.mean() or min(abs(f - 2e9).min(), abs(f - 3e9).min()) > 1e3:
            problems.append(f"{which}: {len(f)} points to {f.max() / 1e9:.2f} GHz, step {steps.max() / 1e6:.2f} MHz")
    return _result(not problems, "; ".join(problems) or "uniform grids to 6 GHz with 2 and 3 GHz", refs)


@task_check
def insertion_loss(ev, which: str, f_ghz: float, target_db: float, abs_tol_db: float) -> CheckOutcome:
    """IL at a frequency, recomputed from the raw S21 of the Touchstone file."""
    f, il, ref = _il(ev, which)
    got = _at(f, il, f_ghz * 1e9)
    ok = abs(got - target_db) <= abs_tol_db
    return _result(ok, f"{which} IL({f_ghz:g} GHz) from S21 = {got:.3f} dB vs {target_db} ± {abs_tol_db} dB", [ref])


@task_check
def meets_spec(ev) -> CheckOutcome:
    """The specification as a designer reads it: the 3 dB edge at fc and >= 15 dB at 3 GHz."""
    f, il, ref = _il(ev, "maxflat")
    edge, stop = _at(f, il, FC), _at(f, il, 3e9)
    ok = edge <= 3.1 and stop >= 15.0
    return _result(ok, f"maximally flat IL(2 GHz) = {edge:.2f} dB (<= 3.1), IL(3 GHz) = {stop:.2f} dB (>= 15)", [ref])


@task_check
def equiripple_ripple(ev, ripple_db: float = 3.0, abs_tol_db: float = 0.1) -> CheckOutcome:
    """Passband (f <= fc) ripple of the equal-ripple filter from its raw S21."""
    f, il, ref = _il(ev, "equiripple")
    pb = il[f <= FC * (1 + 1e-9)]
    got = float(pb.max() - pb.min())
    return _result(abs(got - ripple_db) <= abs_tol_db, f"passband ripple {got:.3f} dB vs {ripple_db} dB", [ref])


@task_check
def sharper_cutoff(ev) -> CheckOutcome:
    """Same cutoff (about 3 dB at 2 GHz for both), but the equal-ripple filter is >10 dB steeper at 3 GHz."""
    f, a, ref_a = _il(ev, "maxflat")
    g, b, ref_b = _il(ev, "equiripple")
    ea, eb, ia, ib = _at(f, a, FC), _at(g, b, FC), _at(f, a, 3e9), _at(g, b, 3e9)
    ok = abs(ea - 3.01) < 0.1 and abs(eb - 3.0) < 0.1 and ib > ia + 10
    return _result(ok, f"IL(2 GHz) {ea:.2f} / {eb:.2f} dB; IL(3 GHz) equal ripple {ib:.1f} dB vs maximally flat "
                       f"{ia:.1f} dB", [ref_a, ref_b])


@task_check
def lossless_reciprocal(ev, tol: float = 1e-6) -> CheckOutcome:
    """A lossless reciprocal ladder: |S11|^2 + |S21|^2 = 1 and S21 = S12 at every frequency."""
    worst, refs = 0.0, []
    for which in ("maxflat", "equiripple"):
        _, s = read_s2p(ev, f"results/{which}.s2p")
        refs.append(f"submission/results/{which}.s2p")
        power = np.abs(s[:, 0, 0]) ** 2 + np.abs(s[:, 1, 0]) ** 2
        worst = max(worst, float(np.abs(power - 1).max()), float(np.abs(s[:, 1, 0] - s[:, 0, 1]).max()))
    return _result(worst <= tol, f"largest deviation from lossless/reciprocal {worst:.2e} (tolerance {tol:g})", refs)


@task_check
def maxflat_monotone(ev) -> CheckOutcome:
    """Maximally flat: insertion loss never decreases with frequency (no ripple anywhere)."""
    f, il, ref = _il(ev, "maxflat")
    d = np.diff(il)
    return _result(bool((d >= -1e-9).all()), f"largest decrease {min(0.0, float(d.min())):.2e} dB", [ref])


@task_check
def matches_analytic(ev, abs_tol_db: float = 0.01) -> CheckOutcome:
    """The simulated maximally flat IL equals 10 log10(1 + (f/fc)^10) over the whole sweep."""
    f, il, ref = _il(ev, "maxflat")
    mask = il < 60  # beyond 60 dB numerical noise dominates
    ana = 10 * np.log10(1 + (f / FC) ** 10)
    worst = float(np.abs(il[mask] - ana[mask]).max())
    return _result(worst <= abs_tol_db, f"max |IL - analytic| = {worst:.4f} dB over {mask.sum()} points", [ref])


@task_check
def csv_matches_touchstone(ev, abs_tol_db: float = 1e-3) -> CheckOutcome:
    df = ev.read_csv("results/insertion_loss.csv")
    for col in ("f_GHz", "IL_maxflat_dB", "IL_equiripple_dB"):
        if col not in df.columns:
            raise MissingEvidence(f"submission/results/insertion_loss.csv:{col}", "column not found")
    worst = 0.0
    for which, col in (("maxflat", "IL_maxflat_dB"), ("equiripple", "IL_equiripple_dB")):
        f, il, _ = _il(ev, which)
        if len(f) != len(df):
            return _result(False, f"{len(df)} CSV rows vs {len(f)} Touchstone points",
                           ["submission/results/insertion_loss.csv"])
        worst = max(worst, float(np.abs(df[col].to_numpy(float) - il).max()))
    return _result(worst <= abs_tol_db, f"CSV vs Touchstone: max difference {worst:.2e} dB",
                   ["submission/results/insertion_loss.csv"])
