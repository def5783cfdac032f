"""Task checks for phc-band-gaps (PRIVATE). Gaps are recomputed from the raw band files; the
structures are verified from the physics of the raw bands (long-wavelength TM slope = 1/sqrt(eps_avg)),
not from what gaps.json claims, and each structure's validation group is gated on that.

Whether the band files came from MPB at all is decided by the root gates: the receipts (every band file
written by a process that loaded meep), ``cpu_for_claimed_work`` below (those processes spent the CPU the
declared solves cost), and the scorer's own MPB solves of seed-chosen k-points of the public and the secret-input replay
(tests/recompute.py)."""

from __future__ import annotations

import math
import re

import numpy as np

from workbench.evidence import MissingEvidence
from workbench.scoring import CheckOutcome, task_check
from workbench.scoring.receipt_checks import receipts_of

# reciprocal basis of the triangular lattice a1 = (sqrt3/2, 1/2), a2 = (sqrt3/2, -1/2), units 2pi/a
TRI_RECIP = np.linalg.inv(np.array([[math.sqrt(3) / 2, 0.5], [math.sqrt(3) / 2, -0.5]])).T
SLOPE = {  # effective-medium TM slope c/sqrt(f*eps_in + (1-f)*eps_out)
    "square": 1 / math.sqrt(math.pi * 0.2 ** 2 * 8.9 + 1 - math.pi * 0.2 ** 2),
    "triangular": 1 / math.sqrt((f := math.pi * 0.48 ** 2 / (math.sqrt(3) / 2)) + (1 - f) * 13.0),
}
# CPU seconds MPB spends per k-point, band and pixel of the unit cell (res^2) on one core, measured on the
# reference machine for full paths at resolutions 32 and 64 (3.6e-6 to 9.7e-6; rounded down, see TOLERANCES.md)
MPB_CPU_PER_K_BAND_PIXEL = 3e-6
CORNERS = {"square": [(0, 0), (0.5, 0), (0.5, 0.5)], "triangular": [(0, 0), (0, 0.5), (-1 / 3, 1 / 3)]}


def _result(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(float(bool(ok)), ("pass: " if ok else "fail: ") + text, refs)


def _resolutions(ev, stem: str) -> list[int]:
    found = sorted(int(m.group(1)) for p in ev.glob(f"results/{stem}_res*.csv")
                   if (m := re.search(r"_res(\d+)\.csv$", p)))
    if not found:
        raise MissingEvidence(f"submission/results/{stem}_res*.csv", "no band files")
    return found


def _bands(ev, stem: str, res: int | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """(k points [n, 2], frequencies [n, bands]) of the given (default: finest) resolution."""
    res = res or _resolutions(ev, stem)[-1]
    path = f"results/{stem}_res{res}.csv"
    df = ev.read_csv(path)
    cols = [c for c in df.columns if re.fullmatch(r"band\d+", c)]
    if not {"kx", "ky"} <= set(df.columns) or len(cols) < 3:
        raise MissingEvidence(f"submission/{path}", "needs kx, ky and band columns")
    cols.sort(key=lambda c: int(c[4:]))
    return df[["kx", "ky"]].to_numpy(float), df[cols].to_numpy(float), f"submission/{path}"


def _square_gap(ev, res=None):
    _, f, ref = _bands(ev, "bands_square_tm", res)
    return float(f[:, 0].max()), float(f[:, 1].min()), [ref]


def _triangular_gap(ev, res=None):
    _, te, r1 = _bands(ev, "bands_triangular_te", res)
    _, tm, r2 = _bands(ev, "bands_triangular_tm", res)
    lower = max(float(te[:, 0].max()), float(tm[:, 1].max()))
    upper = min(float(te[:, 1].min()), float(tm[:, 2].min()))
    return lower, upper, [r1, r2]


def _ratio(lo: float, hi: float) -> float:
    return max(0.0, 200 * (hi - lo) / (hi + lo))


GAPS = {"square": _square_gap, "triangular": _triangular_gap}


@task_check
def structure(ev, lattice: str, rel_tol: float = 0.015) -> CheckOutcome:
    """The simulated crystal is the paper's: the TM long-wavelength slope equals 1/sqrt(eps_avg)."""
    stem = "bands_square_tm" if lattice == "square" else "bands_triangular_tm"
    k, f, ref = _bands(ev, stem)
    kc = k if lattice == "square" else k @ TRI_RECIP
    norms = np.linalg.norm(kc, axis=1)
    i = next((j for j, n in enumerate(norms) if 1e-9 < n <= 0.2), None)
    if i is None:
        return _result(False, "no k-point with 0 < |k| <= 0.2 (2pi/a) near Gamma", [ref])
    slope = f[i, 0] / norms[i]
    ok = math.isclose(slope, SLOPE[lattice], rel_tol=rel_tol)
    return _result(ok, f"band 1 at |k| = {norms[i]:.4f}: slope {slope:.4f} c vs effective medium "
                       f"{SLOPE[lattice]:.4f} c", [ref])


@task_check
def kpath(ev, lattice: str, min_interp: int = 3) -> CheckOutcome:
    """The k-path visits the irreducible zone's corners with >= 3 points between successive corners."""
    stem = "bands_square_tm" if lattice == "square" else "bands_triangular_tm"
    k, _, ref = _bands(ev, stem)
    idx = []
    for c in CORNERS[lattice]:
        hits = [j for j, p in enumerate(k) if np.allclose(p, c, atol=1e-4)]
        if not hits:
            return _result(False, f"corner {c} is not on the path", [ref])
        idx.append(hits[0])
    gaps = np.diff(sorted(idx))
    ok = len(gaps) == 2 and gaps.min() > min_interp
    return _result(ok, f"corners at points {idx} of {len(k)}", [ref])


@task_check
def parameters_as_specified(ev) -> CheckOutcome:
    d = ev.read_json("results/gaps.json")
    try:
        ok = (math.isclose(d["square"]["epsilon"], 8.9) and math.isclose(d["square"]["radius"], 0.2)
              and math.isclose(d["triangular"]["epsilon"], 13) and math.isclose(d["triangular"]["radius"], 0.48))
    except (KeyError, TypeError):
        ok = False
    text = "epsilon and radius of both structures as specified" if ok else "parameters missing or different"
    return _result(ok, text, ["submission/results/gaps.json"])


@task_check
def band_files(ev, min_resolutions: int = 3, min_bands: int = 8) -> CheckOutcome:
    problems, refs = [], []
    for stem in ("bands_square_tm", "bands_triangular_te", "bands_triangular_tm"):
        try:
            res = _resolutions(ev, stem)
        except MissingEvidence:
            problems.append(f"{stem}: none")
            continue
        for r in res:
            _, f, ref = _bands(ev, stem, r)
            refs.append(ref)
            if f.shape[1] < min_bands or not np.isfinite(f).all():
                problems.append(f"{ref}: {f.shape[1]} bands")
        if len(res) < min_resolutions:
            problems.append(f"{stem}: resolutions {res}")
        arrays = {r: _bands(ev, stem, r)[1] for r in res}
        for a, b in zip(res, res[1:], strict=False):  # another resolution is another discretisation: the bands move
            fa, fb = arrays[a], arrays[b]
            if fa.shape == fb.shape and np.nanmax(np.abs(fa - fb)) <= 1e-6:
                problems.append(f"{stem}: resolutions {a} and {b} have the same bands")
    return _result(not problems, "; ".join(problems) or f">= {min_resolutions} resolutions, >= {min_bands} bands", refs)


@task_check
def converged(ev, max_change_points: float = 0.3, min_finest: int = 32) -> CheckOutcome:
    """Both gaps at the two finest resolutions differ by <= 0.3 percentage points; finest >= 32."""
    parts, ok = [], True
    for lattice, stem in (("square", "bands_square_tm"), ("triangular", "bands_triangular_tm")):
        res = _resolutions(ev, stem)
        if len(res) < 3 or res[-1] < min_finest:
            return _result(False, f"{lattice}: resolutions {res}", [])
        r1, r2 = (_ratio(*GAPS[lattice](ev, r)[:2]) for r in res[-2:])
        ok &= abs(r2 - r1) <= max_change_points
        parts.append(f"{lattice} {res[-2]}->{res[-1]}: {r1:.2f} -> {r2:.2f} %")
    return _result(ok, "; ".join(parts), [])


@task_check
def gap_ratio(ev, lattice: str, target: float, abs_tol: float) -> CheckOutcome:
    lo, hi, refs = GAPS[lattice](ev)
    r = _ratio(lo, hi)
    return _result(abs(r - target) <= abs_tol, f"{lattice} gap from raw bands {lo:.4f}-{hi:.4f} c/a = {r:.2f} % "
                   f"vs {target} ± {abs_tol}", refs)


@task_check
def gap_edges(ev, lattice: str, lower: float, upper: float, abs_tol: float) -> CheckOutcome:
    lo, hi, refs = GAPS[lattice](ev)
    ok = abs(lo - lower) <= abs_tol and abs(hi - upper) <= abs_tol
    return _result(ok, f"edges {lo:.4f}, {hi:.4f} c/a vs {lower}, {upper} (± {abs_tol})", refs)


@task_check
def overlap(ev) -> CheckOutcome:
    """The complete gap is a real overlap: the TE 1-2 and TM 2-3 gaps each exist and intersect."""
    _, te, r1 = _bands(ev, "bands_triangular_te")
    _, tm, r2 = _bands(ev, "bands_triangular_tm")
    te_gap, tm_gap = (te[:, 0].max(), te[:, 1].min()), (tm[:, 1].max(), tm[:, 2].min())
    ok = te_gap[1] > te_gap[0] and tm_gap[1] > tm_gap[0] and min(te_gap[1], tm_gap[1]) > max(te_gap[0], tm_gap[0])
    return _result(ok, f"TE gap {te_gap[0]:.4f}-{te_gap[1]:.4f}, TM gap {tm_gap[0]:.4f}-{tm_gap[1]:.4f} c/a", [r1, r2])


@task_check
def summary_matches_raw(ev, lattice: str, abs_tol: float = 1e-4) -> CheckOutcome:
    d = ev.read_json("results/gaps.json")
    stem = "bands_square_tm" if lattice == "square" else "bands_triangular_tm"
    res = _resolutions(ev, stem)[-1]
    lo, hi, refs = GAPS[lattice](ev, res)
    try:
        g = d[lattice]["gaps"][str(res)]
        ok = abs(g["lower"] - lo) <= abs_tol and abs(g["upper"] - hi) <= abs_tol
    except (KeyError, TypeError):
        return _result(False, f"gaps.json has no {lattice} gap at resolution {res}", ["submission/results/gaps.json"])
    return _result(ok, f"gaps.json {g['lower']:.5f}-{g['upper']:.5f} vs raw {lo:.5f}-{hi:.5f}",
                   ["submission/results/gaps.json", *refs])


@task_check
def cpu_for_claimed_work(ev, package: str = "meep", fraction: float = 0.4, overhead_sec: float = 0.5) -> CheckOutcome:
    """The processes that loaded meep spent at least ``overhead_sec`` (importing meep and NumPy costs about
    that) plus ``fraction`` of the CPU time the declared band files cost: k-points x bands x res^2 pixels,
    priced by :data:`MPB_CPU_PER_K_BAND_PIXEL`. Band files copied out of a cache by a process that imports
    meep for its version string do not have that CPU behind them."""
    claimed, parts = 0.0, []
    for stem in ("bands_square_tm", "bands_triangular_te", "bands_triangular_tm"):
        try:
            res = _resolutions(ev, stem)
        except MissingEvidence:
            continue
        for r in res:
            _, f, _ = _bands(ev, stem, r)
            claimed += f.shape[0] * f.shape[1] * r * r * MPB_CPU_PER_K_BAND_PIXEL
        parts.append(f"{stem} at {res}")
    if not parts:
        raise MissingEvidence("submission/results/bands_*_res*.csv", "no band files")
    cpu = sum(p.cpu_sec for p in receipts_of(ev).loaders_of(package))
    need = overhead_sec + fraction * claimed
    ok = cpu >= need
    # a pass does not quote the measured CPU time, so two replays of the same work score identically
    used = f"at least the {need:.2f} CPU s needed" if ok else f"{cpu:.2f} CPU s, less than the {need:.2f} needed"
    return _result(ok, f"processes that loaded {package} used {used}: the declared band files ({'; '.join(parts)}) "
                       f"cost about {claimed:.1f} CPU s ({overhead_sec:g} s of imports + {fraction:g} of that needed)",
                   ["replay/receipts.json"])
