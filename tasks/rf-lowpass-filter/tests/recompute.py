"""Scorer-side spot recomputation for rf-lowpass-filter (PRIVATE; runs in the task's environment, confined).

``ladder_cascade``: the ABCD cascade of the ladder the submission *declared* (design.json's components,
in order from port 1, with their values as written) is computed here, with NumPy only, at the
frequencies of the submitted Touchstone file, and compared with every submitted S-parameter (S11, S21,
S12, S22, complex). A real scikit-rf ladder simulation agrees to ~1e-13; a response written from a
closed-form insertion loss with an invented phase, a file for another network, or components that are
not the ones simulated disagree by orders of magnitude more than the tolerance. The S21 phase (the
ladder's group delay) and the reflection's phase are part of the comparison: they are what a magnitude
formula cannot supply.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

UNITS = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
KINDS = ("shunt_capacitor", "series_inductor")
MAX_BYTES = 8 << 20


def read_s2p(path: Path) -> tuple[np.ndarray, np.ndarray, float]:
    """(f in Hz, S[f, 2, 2], reference resistance) of a Touchstone v1 two-port (RI, MA or DB)."""
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
        numbers.extend(float(x) for x in line.split())
    if not numbers or len(numbers) % 9:
        raise ValueError(f"{path.name}: not a two-port Touchstone file")
    a = np.array(numbers).reshape(-1, 9)
    x, y = a[:, 1::2], a[:, 2::2]
    if fmt == "ri":
        s = x + 1j * y
    elif fmt == "ma":
        s = x * np.exp(1j * np.deg2rad(y))
    else:
        s = 10 ** (x / 20) * np.exp(1j * np.deg2rad(y))
    # Touchstone v1 two-port order: S11, S21, S12, S22
    rows = [np.stack([s[:, 0], s[:, 2]], -1), np.stack([s[:, 1], s[:, 3]], -1)]
    return a[:, 0] * UNITS[unit], np.stack(rows, -2), ref


def cascade(f: np.ndarray, parts: list[dict], z0: float) -> np.ndarray:
    """S[f, 2, 2] of a ladder of ideal shunt capacitors and series inductors between two z0 ports."""
    w = 2 * np.pi * f
    a, b, c, d = (np.ones_like(w, complex), np.zeros_like(w, complex), np.zeros_like(w, complex),
                  np.ones_like(w, complex))
    for p in parts:
        v = float(p["value"])
        if p["kind"] == "shunt_capacitor":
            ea, eb, ec, ed = 1.0, 0.0, 1j * w * v, 1.0
        else:
            ea, eb, ec, ed = 1.0, 1j * w * v, 0.0, 1.0
        a, b, c, d = a * ea + b * ec, a * eb + b * ed, c * ea + d * ec, c * eb + d * ed
    den = a + b / z0 + c * z0 + d
    s11, s21 = (a + b / z0 - c * z0 - d) / den, 2 / den
    s12, s22 = 2 * (a * d - b * c) / den, (-a + b / z0 - c * z0 + d) / den
    return np.stack([np.stack([s11, s12], -1), np.stack([s21, s22], -1)], -2)


def _parts(design: dict, which: str) -> list[dict]:
    block = design.get(which)
    parts = block.get("components") if isinstance(block, dict) else None
    if not isinstance(parts, list) or not parts:
        raise ValueError(f"design.json declares no components for {which}")
    for p in parts:
        ok = isinstance(p, dict) and p.get("kind") in KINDS
        v = float(p.get("value", "nan")) if ok else math.nan
        if not ok or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{which}: component {p!r} is not a shunt capacitor or series inductor with a "
                             "positive value")
    return parts


def ladder_cascade(evidence: Path, atol: float = 1e-6, min_points: int = 2) -> dict:
    """Score 1 when at least one filter's Touchstone file exists and every one that does equals (within
    ``atol`` on every complex S-parameter) the cascade of the components design.json declares for it."""
    results = Path(evidence) / "submission" / "results"
    try:
        design = json.loads((results / "design.json").read_text())
    except (OSError, ValueError) as exc:
        return {"score": 0.0, "rationale": f"design.json unreadable: {exc}"}
    if not isinstance(design, dict):
        return {"score": 0.0, "rationale": "design.json is not an object"}
    z0 = float(design.get("Z0_ohm") or 50.0)
    notes, ok, seen = [], True, 0
    for which in ("maxflat", "equiripple"):
        path = results / f"{which}.s2p"
        if not path.is_file():
            continue
        seen += 1
        try:
            f, s, ref = read_s2p(path)
            parts = _parts(design, which)
        except (OSError, ValueError) as exc:
            ok = False
            notes.append(f"{which}: {exc}")
            continue
        if len(f) < min_points or ref != z0:
            ok = False
            notes.append(f"{which}: {len(f)} points referenced to {ref:g} ohm (need >= {min_points} at "
                         f"Z0_ohm = {z0:g})")
            continue
        dev = np.abs(cascade(f, parts, z0) - s)
        worst = float(dev.max())
        entry = ("S11", "S12", "S21", "S22")[int(np.argmax(dev.max(axis=0).ravel()))]
        good = worst <= atol
        ok &= good
        ladder = " ".join(f"{'C' if p['kind'] == 'shunt_capacitor' else 'L'}={float(p['value']):.4g}" for p in parts)
        notes.append(f"{which}: the declared ladder ({ladder}) cascaded here vs the submitted S-parameters: "
                     f"largest difference {worst:.2e} ({entry} at {f[int(np.argmax(dev.max(axis=(1, 2))))] / 1e9:g}"
                     f" GHz; tolerance {atol:g})")
    if not seen:
        return {"score": 0.0, "rationale": "no results/maxflat.s2p or results/equiripple.s2p to recompute"}
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + "; ".join(notes),
            "refs": ["submission/results/design.json"] + [f"submission/results/{w}.s2p"
                                                           for w in ("maxflat", "equiripple")
                                                           if (results / f"{w}.s2p").is_file()]}


# --- the secret-input replay: the scorer's own synthesis of the drawn specification -------------------

def _maxflat_g(n: int) -> list[float]:
    return [2 * math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]


def _equiripple_g(n: int, ripple_db: float) -> list[float]:
    beta = math.log(1 / math.tanh(ripple_db * math.log(10) / 40))
    gamma = math.sinh(beta / (2 * n))
    a = [math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]
    b = [gamma ** 2 + math.sin(k * math.pi / n) ** 2 for k in range(1, n + 1)]
    g = [2 * a[0] / gamma]
    for k in range(2, n + 1):
        g.append(4 * a[k - 2] * a[k - 1] / (b[k - 2] * g[k - 2]))
    return g


def synthesis(cfg: dict) -> tuple[int, dict[str, list[dict]]]:
    """The order and the shunt-C-first ladders (SI values) the drawn specification asks for."""
    fc, z0 = float(cfg["fc_Hz"]), float(cfg["Z0_ohm"])
    ratio, need = float(cfg["spec_f_Hz"]) / fc, float(cfg["spec_IL_dB"])
    n = next(k for k in range(1, 30) if 10 * math.log10(1 + ratio ** (2 * k)) >= need)
    wc = 2 * math.pi * fc
    out = {}
    for which, g in (("maxflat", _maxflat_g(n)), ("equiripple", _equiripple_g(n, float(cfg["ripple_dB"])))):
        out[which] = [{"kind": "shunt_capacitor", "value": gk / (z0 * wc)} if k % 2 else
                      {"kind": "series_inductor", "value": z0 * gk / wc} for k, gk in enumerate(g, 1)]
    return n, out


def secret_design(evidence: Path, atol: float = 1e-6, rel_tol: float = 1e-6) -> dict:
    """Score 1 when the secret replay (inputs drawn for it alone) delivered, for every filter the public
    replay delivered, the scorer's own synthesis of the drawn specification (order N, and every component's
    kind and value within ``rel_tol``) and a Touchstone file on the drawn sweep, referenced to the drawn Z0,
    whose S-parameters equal (within ``atol``) the cascade of the scorer's own ladder: the score is of the
    scorer's synthesis and simulation, never of the submitted one."""
    evidence = Path(evidence)
    pub, sec = evidence / "submission" / "results", evidence / "secret" / "submission" / "results"
    try:
        cfg = json.loads((evidence / "secret" / "replay" / "input" / "inputs.json").read_text())
        n, ladders = synthesis(cfg)
        sw = cfg["sweep"]
        f_drawn = np.linspace(float(sw["start_Hz"]), float(sw["stop_Hz"]), int(sw["points"]))
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as exc:
        return {"score": 0.0, "rationale": f"fail: no secret inputs to recompute: {exc}"}
    wanted = [w for w in ("maxflat", "equiripple") if (pub / f"{w}.s2p").is_file()]
    if not wanted:
        return {"score": 0.0, "rationale": "fail: the public replay delivered no Touchstone file"}
    try:
        design = json.loads((sec / "design.json").read_text())
        if not isinstance(design, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        return {"score": 0.0, "rationale": f"fail: the secret replay's design.json is unreadable: {exc}"}
    z0 = float(cfg["Z0_ohm"])
    notes, ok = [], True
    for which in wanted:
        block = design.get(which) if isinstance(design.get(which), dict) else {}
        parts = block.get("components") if isinstance(block.get("components"), list) else []
        own = ladders[which]
        kinds_ok = len(parts) == len(own) and all(isinstance(p, dict) and p.get("kind") == q["kind"]
                                                  for p, q in zip(parts, own, strict=False))
        try:
            rel = max(abs(float(p["value"]) - q["value"]) / q["value"]
                      for p, q in zip(parts, own, strict=False)) if kinds_ok \
                else math.inf
        except (KeyError, TypeError, ValueError):
            rel = math.inf
        good_design = block.get("N") == n and rel <= rel_tol
        try:
            f, s, ref = read_s2p(sec / f"{which}.s2p")
            grid = len(f) == len(f_drawn) and float(np.abs(f - f_drawn).max()) <= 1e-9 * f_drawn[-1] + 1.0
            dev = float(np.abs(cascade(f, own, z0) - s).max()) if grid else math.inf
            ref_ok = ref == z0
        except (OSError, ValueError) as exc:
            ok = False
            notes.append(f"{which}: {exc}")
            continue
        good = good_design and grid and ref_ok and dev <= atol
        ok &= good
        notes.append(f"{which}: N {block.get('N')} vs {n}, components vs the scorer's synthesis "
                     f"{rel:.1e} relative (tolerance {rel_tol:g}), "
                     f"sweep {'as drawn' if grid else 'not the drawn one'}, "
                     f"reference {ref:g} ohm vs {z0:g}, S vs the scorer's own ladder cascaded {dev:.1e} "
                     f"(tolerance {atol:g})")
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + f"secret inputs {json.dumps(cfg)}: "
            + "; ".join(notes),
            "refs": ["secret/submission/results/design.json"] + [f"secret/submission/results/{w}.s2p" for w in wanted]}
