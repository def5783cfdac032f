"""Task checks for binomial-transformer (PRIVATE). Bandwidths and the binomial response are measured
by the scorer on the raw Touchstone files; the binomial claims are gated on the simulated response
being the binomial one (a reversed or mis-sized transformer can still match exactly at f0).

Three root-level gates (rubric P1-P3) decide whether any of that counts: the Touchstone files were written
by a process that loaded scikit-rf (execution receipts), the cascade of the declared lines reproduces
them (tests/recompute.py), and the package carries code, not stored results (check kind
``delivered_size``)."""

from __future__ import annotations

import math

import numpy as np

from workbench.evidence import MissingEvidence
from workbench.parsers import first_match
from workbench.scoring import CheckOutcome, task_check

Z0, ZL, N, GM, F0 = 100.0, 50.0, 3, 0.05, 1e9
A = 2 ** -N * abs((ZL - Z0) / (ZL + Z0))
UNITS = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}


def _result(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(float(bool(ok)), ("pass: " if ok else "fail: ") + text, refs)


def read_s1p(ev, name: str) -> tuple[np.ndarray, np.ndarray, float]:
    """(f in Hz, complex S11, reference impedance) of a one-port Touchstone file."""
    path = f"results/{name}.s1p"
    unit, fmt, ref, numbers = "ghz", "ma", 50.0, []
    for line in ev.read_text(path).splitlines():
        line = line.split("!", 1)[0].strip()
        if not line:
            continue
        if line.startswith("#"):
            opts = line[1:].lower().split()
            unit = next((o for o in opts if o in UNITS), unit)
            fmt = next((o for o in opts if o in ("ri", "ma", "db")), fmt)
            if "r" in opts and opts.index("r") + 1 < len(opts):
                ref = float(opts[opts.index("r") + 1])
            continue
        numbers.extend(float(x) for x in line.replace(",", " ").split())
    if not numbers or len(numbers) % 3:
        raise MissingEvidence(f"submission/{path}", "is not a one-port Touchstone file")
    a = np.array(numbers).reshape(-1, 3)
    x, y = a[:, 1], a[:, 2]
    s = x + 1j * y if fmt == "ri" else (x if fmt == "ma" else 10 ** (x / 20)) * np.exp(1j * np.deg2rad(y))
    return a[:, 0] * UNITS[unit], s, ref


def bandwidth(f: np.ndarray, g: np.ndarray) -> float:
    i0 = int(np.argmin(np.abs(f - F0)))
    if g[i0] > GM:
        return 0.0
    lo = hi = i0
    while lo > 0 and g[lo - 1] <= GM:
        lo -= 1
    while hi < len(f) - 1 and g[hi + 1] <= GM:
        hi += 1
    return float((f[hi] - f[lo]) / F0)


@task_check
def profile(ev, targets: list[float], rel_tol: float = 0.005) -> CheckOutcome:
    """The ordered impedance profile from the line to the load: one design decision, scored as one."""
    d = ev.read_json("results/design.json")
    z = d.get("sections_ohm") if isinstance(d, dict) else None
    if not isinstance(z, list) or len(z) != len(targets):
        return _result(False, f"sections_ohm = {z!r}", ["submission/results/design.json"])
    ok = all(math.isclose(float(a), b, rel_tol=rel_tol) for a, b in zip(z, targets, strict=True))
    return _result(ok, f"sections {[round(float(x), 2) for x in z]} ohm vs {targets} (from the 100 ohm side)",
                   ["submission/results/design.json"])


@task_check
def reference_impedance(ev) -> CheckOutcome:
    refs = [read_s1p(ev, n)[2] for n in ("binomial", "single")]
    return _result(all(r == Z0 for r in refs), f"Touchstone reference impedances {refs} ohm (the 100 ohm line)",
                   ["submission/results/binomial.s1p", "submission/results/single.s1p"])


@task_check
def sweep(ev, max_step_hz: float = 1e6) -> CheckOutcome:
    problems = []
    for n in ("binomial", "single"):
        f, _, _ = read_s1p(ev, n)
        d = np.diff(f)
        if f.min() > 1e6 or f.max() < 2e9 - 1e6 or d.max() > max_step_hz + 1 or np.ptp(d) > 1e-6 * d.mean():
            problems.append(f"{n}: {len(f)} points {f.min() / 1e9:g}-{f.max() / 1e9:g} GHz, "
                            f"step {d.max() / 1e6:.2f} MHz")
    return _result(not problems, "; ".join(problems) or "uniform 0-2 GHz sweeps, <= 1 MHz",
                   ["submission/results/binomial.s1p", "submission/results/single.s1p"])


@task_check
def csv_matches(ev, tol: float = 1e-6) -> CheckOutcome:
    df = ev.read_csv("results/reflection.csv")
    worst = 0.0
    for n in ("binomial", "single"):
        col = f"gamma_{n}"
        if col not in df.columns:
            raise MissingEvidence(f"submission/results/reflection.csv:{col}", "column not found")
        _, s, _ = read_s1p(ev, n)
        if len(s) != len(df):
            return _result(False, f"{len(df)} rows vs {len(s)} Touchstone points",
                           ["submission/results/reflection.csv"])
        worst = max(worst, float(np.abs(df[col].to_numpy(float) - np.abs(s)).max()))
    return _result(worst <= tol, f"max |CSV - |S11|| = {worst:.2e}", ["submission/results/reflection.csv"])


@task_check
def binomial_response(ev, tol: float = 0.015) -> CheckOutcome:
    """Gate: the simulated |Gamma| is the binomial 2^N |A| |cos theta|^N (small-reflection theory)."""
    f, s, _ = read_s1p(ev, "binomial")
    theta = math.pi / 2 * f / F0
    dev = float(np.abs(np.abs(s) - 2 ** N * A * np.abs(np.cos(theta)) ** N).max())
    return _result(dev <= tol, f"max deviation from 2^N|A||cos|^N: {dev:.4f} (tolerance {tol})",
                   ["submission/results/binomial.s1p"])


@task_check
def matched_at_f0(ev, tol: float = 0.005) -> CheckOutcome:
    f, s, _ = read_s1p(ev, "binomial")
    g = float(np.abs(s[int(np.argmin(np.abs(f - F0)))]))
    return _result(g <= tol, f"|Gamma(f0)| = {g:.2e}", ["submission/results/binomial.s1p"])


@task_check
def measured_bandwidth(ev, which: str, target: float, abs_tol: float) -> CheckOutcome:
    f, s, _ = read_s1p(ev, which)
    bw = bandwidth(f, np.abs(s))
    return _result(abs(bw - target) <= abs_tol, f"{which}: |Gamma| <= {GM} over {bw:.3f} f0 "
                                                f"(target {target} ± {abs_tol})", [f"submission/results/{which}.s1p"])


@task_check
def wider_band(ev, factor: float = 3.0) -> CheckOutcome:
    fb, sb, _ = read_s1p(ev, "binomial")
    fs, ss, _ = read_s1p(ev, "single")
    b, s = bandwidth(fb, np.abs(sb)), bandwidth(fs, np.abs(ss))
    return _result(b >= factor * s > 0, f"binomial {b:.3f} vs single {s:.3f} f0",
                   ["submission/results/binomial.s1p", "submission/results/single.s1p"])


@task_check
def reported_bandwidths(ev, tol: float = 0.01) -> CheckOutcome:
    d = ev.read_json("results/design.json")
    out = []
    for n in ("binomial", "single"):
        f, s, _ = read_s1p(ev, n)
        try:
            out.append(abs(float(d[f"bandwidth_{n}"]) - bandwidth(f, np.abs(s))) <= tol)
        except (KeyError, TypeError, ValueError):
            out.append(False)
    return _result(all(out), f"reported bandwidths agree with the raw curves: {out}",
                   ["submission/results/design.json"])


@task_check
def skrf_version(ev, expected: str = "2.2.0") -> CheckOutcome:
    """The version the run printed: the FIRST line of the replay's standard output that is only
    ``scikit-rf <version>`` (anchored; a later line, or text inside another line, is not read), and it must be
    the environment's scikit-rf (requirements.txt pins it), in both replays."""
    got = {}
    for replay, rel in (("public", "replay/stdout.log"), ("secret", "secret/replay/stdout.log")):
        got[replay] = first_match(r"^\s*scikit-rf\W{0,3}v?(\d+\.\d+\.\d+)\s*$", ev.read_text(rel))
    ok = all(v == expected for v in got.values())
    return _result(ok, f"scikit-rf versions printed: {got} (the environment's: {expected})",
                   ["replay/stdout.log", "secret/replay/stdout.log"])
