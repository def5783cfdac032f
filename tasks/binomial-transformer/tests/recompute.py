"""Scorer-side spot recomputation for binomial-transformer (PRIVATE; runs in the task's environment, confined).

``line_cascade``: the input reflection of the transformer the submission *declared* (design.json's
``sections_ohm`` from the line towards the load, and ``single_ohm`` for the single section, each a
quarter wave at ``f0_Hz``, ending in ``ZL_ohm``, seen from ``Z0_ohm``) is computed here from the ABCD
matrices of ideal TEM lines, with NumPy only, at the frequencies of each submitted one-port Touchstone
file, and compared with the submitted complex S11. The electrical length is allowed one common scale
factor within ±1 % (fitted), so a package that cut its lines with c = 3e8 against a 299792458 m/s phase
velocity is still recognised as the declared transformer; nothing else is fitted.

A cascade of scikit-rf lines agrees to ~2e-8 (scikit-rf's own regularisation at f = 0); the
small-reflection formula 2^N A e^{-jN theta} cos^N theta that the textbook gives for the binomial response
is off by up to 0.008, a reversed or re-ordered profile by ~0.1, a single-section approximation
Gamma_0 + Gamma_1 e^{-2j theta} by ~0.02: the phase and the exact magnitude of the reflection are what a
formula copied from the book cannot supply.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

UNITS = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
MAX_BYTES = 8 << 20
Z0, ZL, F0 = 100.0, 50.0, 1e9  # the task's line, load and design frequency (used when design.json omits them)


def read_s1p(path: Path) -> tuple[np.ndarray, np.ndarray, float]:
    """(f in Hz, complex S11, reference impedance) of a one-port Touchstone file (RI, MA or DB)."""
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"{path.name}: larger than {MAX_BYTES >> 20} MB")
    unit, fmt, ref, numbers = "ghz", "ma", 50.0, []
    for line in path.read_text(errors="replace").splitlines():
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
        raise ValueError(f"{path.name}: not a one-port Touchstone file")
    a = np.array(numbers).reshape(-1, 3)
    x, y = a[:, 1], a[:, 2]
    s = x + 1j * y if fmt == "ri" else (x if fmt == "ma" else 10 ** (x / 20)) * np.exp(1j * np.deg2rad(y))
    return a[:, 0] * UNITS[unit], s, ref


def reflection(f: np.ndarray, sections: list[float], z0: float, zl: float, f0: float, scale: float = 1.0):
    """Input reflection (referenced to z0) of quarter-wave (at f0) ideal lines of impedances ``sections``,
    from the z0 side, terminated in zl."""
    theta = np.pi / 2 * f / f0 * scale
    cos, sin = np.cos(theta), np.sin(theta)
    a, b = np.ones_like(theta, complex), np.zeros_like(theta, complex)
    c, d = np.zeros_like(theta, complex), np.ones_like(theta, complex)
    for z in sections:
        ea, eb, ec, ed = cos, 1j * z * sin, 1j * sin / z, cos
        a, b, c, d = a * ea + b * ec, a * eb + b * ed, c * ea + d * ec, c * eb + d * ed
    zin = (a * zl + b) / (c * zl + d)
    return (zin - z0) / (zin + z0)


def _best_scale(f, s, sections, z0, zl, f0, span):
    from scipy.optimize import minimize_scalar

    def cost(k):
        return float(np.sum(np.abs(reflection(f, sections, z0, zl, f0, k) - s) ** 2))

    res = minimize_scalar(cost, bounds=(1 - span, 1 + span), method="bounded", options={"xatol": 1e-13})
    k = float(res.x) if cost(res.x) < cost(1.0) else 1.0
    return k, np.abs(reflection(f, sections, z0, zl, f0, k) - s)


def _positive(values, what: str) -> list[float]:
    if not isinstance(values, list) or not values:
        raise ValueError(f"design.json declares no {what}")
    out = [float(v) for v in values]
    if not all(math.isfinite(v) and v > 0 for v in out):
        raise ValueError(f"{what} {values!r}: not positive impedances")
    return out


def line_cascade(evidence: Path, atol: float = 1e-6, length_span: float = 0.01) -> dict:
    """Score 1 when at least one of results/binomial.s1p, results/single.s1p exists and every one that does
    equals (within ``atol`` on complex S11) the reflection of the transformer design.json declares for it."""
    results = Path(evidence) / "submission" / "results"
    try:
        design = json.loads((results / "design.json").read_text())
    except (OSError, ValueError) as exc:
        return {"score": 0.0, "rationale": f"design.json unreadable: {exc}"}
    if not isinstance(design, dict):
        return {"score": 0.0, "rationale": "design.json is not an object"}
    try:
        z0, zl, f0 = (float(design.get(k) or v) for k, v in (("Z0_ohm", Z0), ("ZL_ohm", ZL), ("f0_Hz", F0)))
    except (TypeError, ValueError) as exc:
        return {"score": 0.0, "rationale": f"design.json: {exc}"}
    notes, ok, seen = [], True, []
    for which in ("binomial", "single"):
        path = results / f"{which}.s1p"
        if not path.is_file():
            continue
        seen.append(f"submission/results/{which}.s1p")
        try:
            f, s, ref = read_s1p(path)
            if which == "binomial":
                sections = _positive(design.get("sections_ohm"), "sections_ohm")
            else:
                sections = _positive([design.get("single_ohm", math.sqrt(z0 * zl))], "single_ohm")
        except (OSError, ValueError, TypeError) as exc:
            ok = False
            notes.append(f"{which}: {exc}")
            continue
        if ref != z0 or len(f) < 2:
            ok = False
            notes.append(f"{which}: {len(f)} points referenced to {ref:g} ohm (need the {z0:g} ohm line)")
            continue
        k, dev = _best_scale(f, s, sections, z0, zl, f0, length_span)
        worst = float(dev.max())
        good = worst <= atol
        ok &= good
        notes.append(f"{which}: the declared lines {[round(z, 3) for z in sections]} ohm into {zl:g} ohm, quarter "
                     f"wave at {f0 / 1e9:g} GHz (length x {k:.6f}), cascaded here vs the submitted S11: largest "
                     f"difference {worst:.2e} at {f[int(np.argmax(dev))] / 1e9:g} GHz (tolerance {atol:g})")
    if not seen:
        return {"score": 0.0, "rationale": "no results/binomial.s1p or results/single.s1p to recompute"}
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + "; ".join(notes),
            "refs": ["submission/results/design.json", *seen]}


# --- the replay with secret inputs ------------------------------------------------------------------------
BW_TOL = 0.01  # fractional bandwidth, as C5: a grid step is <= 0.001 f0; the scorer measures its own curve
DESIGN_RTOL = 0.005  # section impedances, as A2 (0.5 %): the logarithmic binomial design only
GRID_RTOL = 1e-6  # uniformity of the frequency grid (relative to its step)


def binomial_design(z0: float, zl: float, n: int) -> list[float]:
    """The logarithmic binomial design (Pozar 5.6): ln(Z_{k+1}/Z_k) = 2^-N C(N, k) ln(ZL/Z0), from the line."""
    z = [z0]
    for k in range(n):
        z.append(z[-1] * math.exp(2 ** -n * math.comb(n, k) * math.log(zl / z0)))
    return z[1:]


def bandwidth(f: np.ndarray, g: np.ndarray, f0: float, gm: float) -> float:
    """Width of the band around f0 where |Gamma| <= gm, as a fraction of f0 (the task's measurement)."""
    i0 = int(np.argmin(np.abs(f - f0)))
    if g[i0] > gm:
        return 0.0
    lo = hi = i0
    while lo > 0 and g[lo - 1] <= gm:
        lo -= 1
    while hi < len(f) - 1 and g[hi + 1] <= gm:
        hi += 1
    return float((f[hi] - f[lo]) / f0)


def secret_replay(evidence: Path, atol: float = 1e-6, length_span: float = 0.01) -> dict:
    """Gate: the replay with secret inputs (``secret/replay/input/inputs.json``: Z0, ZL, N, f0, Gamma_m drawn
    for it alone) designed, simulated and measured THOSE transformers. Everything is recomputed (two curves
    of ~2000 points: no sampling): design.json echoes the drawn inputs, its sections are the scorer's own
    logarithmic binomial design within 0.5 % and its single section sqrt(Z0 ZL); each Touchstone file is
    referenced to the drawn Z0, sweeps 0..2 f0 on a uniform grid, and equals the scorer's
    cascade of the declared lines within ``atol``; reflection.csv is |S11|; the reported bandwidths equal the
    scorer's measurement on its OWN cascade of its own design, at the drawn Gamma_m, within 0.01."""
    root = Path(evidence) / "secret"
    try:
        inputs = json.loads((root / "replay" / "input" / "inputs.json").read_text())
    except OSError:
        return {"score": 0.0, "rationale": "fail: no secret replay (the public one failed, or it did not run)"}
    z0, zl, n, f0, gm = (inputs[k] for k in ("Z0_ohm", "ZL_ohm", "N", "f0_Hz", "gamma_m"))
    z0, zl, f0, gm, n = float(z0), float(zl), float(f0), float(gm), int(n)
    results = root / "submission" / "results"
    refs = ["secret/replay/input/inputs.json", "secret/submission/results/design.json"]
    try:
        design = json.loads((results / "design.json").read_text())
        if not isinstance(design, dict):
            raise ValueError("not an object")
        declared = {k: design[k] for k in ("N", "Z0_ohm", "ZL_ohm", "f0_Hz", "gamma_m")}
        sections = _positive(design["sections_ohm"], "sections_ohm")
        # the curves the public replay delivered must be there again (at least one)
        public = Path(evidence) / "submission" / "results"
        wanted = [w for w in ("binomial", "single") if (public / f"{w}.s1p").is_file()] or ["binomial"]
        single = _positive([design["single_ohm"]], "single_ohm") if "single" in wanted else [math.sqrt(z0 * zl)]
        reported = {w: float(design[f"bandwidth_{w}"]) for w in wanted}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return {"score": 0.0, "rationale": f"fail: secret replay's design.json: {exc}", "refs": refs}
    want = binomial_design(z0, zl, n)
    notes, ok = [f"drawn Z0 {z0:g} ohm, ZL {zl:g} ohm, N {n}, f0 {f0 / 1e9:g} GHz, Gamma_m {gm:g}"], True
    echo = {"N": n, "Z0_ohm": z0, "ZL_ohm": zl, "f0_Hz": f0, "gamma_m": gm}
    bad = [k for k, v in echo.items() if not isinstance(declared[k], int | float) or isinstance(declared[k], bool)
           or not math.isclose(float(declared[k]), v, rel_tol=1e-9)]
    if bad:
        ok = False
        notes.append(f"design.json's {', '.join(bad)} are not the drawn inputs ({ {k: declared[k] for k in bad} })")
    if len(sections) != n or not all(math.isclose(a, b, rel_tol=DESIGN_RTOL)
                                     for a, b in zip(sections, want, strict=False)):
        ok = False
        notes.append(f"sections {[round(z, 3) for z in sections]} ohm vs the binomial design "
                     f"{[round(z, 3) for z in want]} ohm (0.5 %)")
    if "single" in wanted and not math.isclose(single[0], math.sqrt(z0 * zl), rel_tol=1e-6):
        ok = False
        notes.append(f"single section {single[0]:g} ohm vs sqrt(Z0 ZL) = {math.sqrt(z0 * zl):g} ohm")
    curves = {}
    for which, lines, mine in (("binomial", sections, want), ("single", single, [math.sqrt(z0 * zl)])):
        if which not in wanted:
            continue
        path = results / f"{which}.s1p"
        refs.append(f"secret/submission/results/{which}.s1p")
        try:
            f, s, ref = read_s1p(path)
        except (OSError, ValueError) as exc:
            ok = False
            notes.append(f"{which}: {exc}")
            continue
        d = np.diff(f)
        # a uniform sweep over 0..2 f0 (how fine is B3's question, asked of the public replay)
        if (not math.isclose(ref, z0, rel_tol=1e-6) or len(f) < 101 or f.min() > d.mean() / 2
                or f.max() < 2 * f0 - d.mean() / 2 or np.ptp(d) > GRID_RTOL * d.mean()):
            ok = False
            notes.append(f"{which}: {len(f)} points {f.min() / 1e9:g}-{f.max() / 1e9:g} GHz referenced to {ref:g} "
                         f"ohm (need a uniform 0-2 f0 sweep referenced to {z0:g} ohm)")
            continue
        k, dev = _best_scale(f, s, lines, z0, zl, f0, length_span)
        worst = float(dev.max())
        ok &= worst <= atol
        own = bandwidth(f, np.abs(reflection(f, mine, z0, zl, f0)), f0, gm)
        ok &= abs(reported[which] - own) <= BW_TOL
        curves[which] = np.abs(s)
        notes.append(f"{which}: S11 vs the scorer's cascade of the declared lines {worst:.1e} (length x {k:.6f}, "
                     f"tolerance {atol:g}); bandwidth reported {reported[which]:.4f}, the scorer's own {own:.4f} "
                     f"(tolerance {BW_TOL})")
    try:
        import csv

        with open(results / "reflection.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        refs.append("secret/submission/results/reflection.csv")
        for which, g in curves.items():
            col = np.array([float(r[f"gamma_{which}"]) for r in rows])
            if len(col) != len(g) or float(np.abs(col - g).max()) > 1e-6:
                ok = False
                notes.append(f"reflection.csv's gamma_{which} is not |S11| of {which}.s1p")
    except (OSError, KeyError, ValueError, TypeError) as exc:
        ok = False
        notes.append(f"reflection.csv: {exc}")
    done = ok and len(curves) == len(wanted)
    return {"score": float(done), "rationale": ("pass: " if done else "fail: ")
            + "; ".join(notes), "refs": refs}
