"""Spot recomputation for h2-pes (PRIVATE: run by the scorer in the task's PySCF environment, confined).

``curve_points`` recomputes, with PySCF itself, a few points of the potential curves the submission
declared and compares them with its raw data: the grid point nearest the minimum of the largest basis'
curve (the one Re and De are refit from) and two more of that curve, one point of every other
correlation-consistent curve, and the H-atom energy of the largest basis. Which points besides the
minimum is decided by a hash of each file's bytes, so a submission cannot know in advance which of
its numbers are checked without computing all of them. For two electrons CCSD equals full CI within
the basis, so E_total is recomputed as CCSD (FCI is far slower in a QZ basis) and E_HF as RHF; the
atom is UHF (exact for one electron in the basis). A bond length written with few decimals widens the
tolerance by what that rounding can move the energy (the curve's slope times half the last decimal,
counted as at least three decimals and capped), so a grid like 4/3 bohr written as 1.333 is not failed
for its rounding.

A Morse curve typed in, a real cc-pVDZ curve relabelled cc-pVQZ, or a curve shifted afterwards misses
by far more than any convergence threshold moves an energy (1e-8 Eh at PySCF's defaults).

Runs without the workbench: only the standard library, NumPy and PySCF.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path

FAMILY = re.compile(r"^(aug-)?cc-pv([dtq56])z$")
CARDINAL = {"d": 2, "t": 3, "q": 4, "5": 5, "6": 6}


def _rows(path: Path) -> list[dict[str, str]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return [{(k or "").strip(): (v or "").strip() for k, v in row.items()}
            for row in csv.DictReader(io.StringIO(text))]


def _curves(results: Path) -> dict[str, tuple[int, bool, Path]]:
    """{basis: (cardinal, augmented, path)} for the correlation-consistent curves the submission wrote."""
    out = {}
    for p in sorted(results.glob("pes_*.csv")):
        name = p.name[len("pes_"):-len(".csv")].lower()
        m = FAMILY.match(name)
        if m:
            out[name] = (CARDINAL[m.group(2)], bool(m.group(1)), p)
    return out


def _points(path: Path) -> list[tuple[float, float, float, int]]:
    """(R, E_HF, E_total, decimals of R as written), sorted by R."""
    pts = []
    for row in _rows(path):
        text = row["R_bohr"]
        decimals = len(text.split(".", 1)[1]) if "." in text and "e" not in text.lower() else 12
        pts.append((float(text), float(row["E_HF"]), float(row["E_total"]), decimals))
    if not pts:
        raise ValueError(f"{path.name}: no points")
    return sorted(pts)


def _rounding_allowance(pts, i: int, cap: float) -> float:
    """How far E may move because R was written rounded: |dE/dR| (from the neighbouring submitted points)
    times half a unit of the last printed decimal (at most 3 decimals' worth), capped at ``cap``."""
    j, k = max(i - 1, 0), min(i + 1, len(pts) - 1)
    if k == j or pts[k][0] == pts[j][0]:
        return 0.0
    slope = max(abs((pts[k][1] - pts[j][1]) / (pts[k][0] - pts[j][0])),
                abs((pts[k][2] - pts[j][2]) / (pts[k][0] - pts[j][0])))
    return min(cap, slope * 0.5 * 10.0 ** -max(pts[i][3], 3))


def _picks(path: Path, n: int, exclude: set[int], count: int) -> list[int]:
    """``count`` distinct indices in range(n), not in ``exclude``, chosen by the file's own hash."""
    digest = hashlib.sha256(path.read_bytes()).digest()
    free = [i for i in range(n) if i not in exclude]
    out = []
    k = 0
    while free and len(out) < count:
        i = free.pop(int.from_bytes(digest[4 * k:4 * k + 4], "big") % len(free))
        out.append(i)
        k += 1
    return out


def _h2(r: float, basis: str) -> tuple[float, float]:
    from pyscf import cc, gto, scf

    mol = gto.M(atom=f"H 0 0 0; H 0 0 {r!r}", unit="Bohr", basis=basis, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-11)
    return float(mf.e_tot), float(cc.CCSD(mf).run(conv_tol=1e-10).e_tot)


def _h_atom(basis: str) -> float:
    from pyscf import gto, scf

    mol = gto.M(atom="H 0 0 0", basis=basis, spin=1, verbose=0)
    return float(scf.UHF(mol).run(conv_tol=1e-11).e_tot)


def curve_points(evidence: Path, tolerance: float = 1e-5, extra_largest: int = 2, per_other: int = 1,
                 rounding_cap: float = 5e-5) -> dict:
    results = evidence / "submission" / "results"
    curves = _curves(results)
    if not curves:
        return {"score": 0.0, "rationale": "no correlation-consistent curve results/pes_<basis>.csv to recompute"}
    largest = max(curves, key=lambda b: (curves[b][0], curves[b][1], b))
    todo: list[tuple[str, float, float, float, float]] = []  # (basis, R, E_HF, E_total, allowance) as submitted
    for basis, (_, _, path) in sorted(curves.items()):
        pts = _points(path)
        if basis == largest:
            i_min = min(range(len(pts)), key=lambda i: pts[i][2])
            chosen = [i_min, *_picks(path, len(pts), {i_min}, extra_largest)]
        else:
            chosen = _picks(path, len(pts), set(), per_other)
        todo += [(basis, *pts[i][:3], _rounding_allowance(pts, i, rounding_cap)) for i in chosen]

    lines, bad = [], 0
    for basis, r, e_hf, e_tot, allowance in todo:
        hf, tot = _h2(r, basis)
        ok = abs(hf - e_hf) <= tolerance + allowance and abs(tot - e_tot) <= tolerance + allowance
        bad += not ok
        lines.append(f"{basis} R={r:g}: E_HF {e_hf:.8f} vs {hf:.8f}, E_total {e_tot:.8f} vs {tot:.8f} "
                     f"({'ok' if ok else 'MISMATCH'})")
    checked = len(todo)

    conv = results / "convergence.csv"
    if conv.is_file():
        e_h = {r.get("basis", "").lower(): r.get("E_H", "") for r in _rows(conv)}
        if largest in e_h:
            mine = _h_atom(largest)
            try:
                theirs = float(e_h[largest])
                ok = abs(mine - theirs) <= tolerance
            except ValueError:
                theirs, ok = e_h[largest], False
            bad += not ok
            checked += 1
            lines.append(f"{largest} H atom: E_H {theirs} vs {mine:.8f} ({'ok' if ok else 'MISMATCH'})")

    score = (checked - bad) / checked
    head = (f"{checked - bad} of {checked} recomputed energies agree with the submitted raw data "
            f"within {tolerance:g} Eh (CCSD = FCI for two electrons, RHF, UHF atom): ")
    return {"score": score, "rationale": head + "; ".join(lines),
            "refs": [f"submission/results/{curves[b][2].name}" for b in sorted(curves)]}
