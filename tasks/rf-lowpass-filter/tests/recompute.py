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
