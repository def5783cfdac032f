"""Recomputation for h2-pes (PRIVATE: run by the scorer in the task's PySCF environment, confined).

``curve_points`` recomputes, with PySCF itself, points of the potential curves the submission declared and
compares them with its raw data:

- the second (secret) replay, whose bond lengths were drawn for it alone: its every curve must hold exactly
  the drawn bond lengths (secret/replay/input/inputs.json), and EVERY point of every correlation-consistent
  curve up to quadruple zeta (aug up to triple; ~11 s for three curves of 11 points) is recomputed, plus
  ``k_costly`` seed-chosen points of a costlier basis; and the H-atom energy of its largest basis;
- the first replay: the grid point nearest the minimum of the largest basis' curve and ``extra_largest``
  more of that curve, ``per_other`` points of every other curve, and the H-atom energy.

Which points is decided by ``seed``, a fresh random number per scoring that the submission can neither see
nor steer (the former digest of each file's bytes was steered by changing an insignificant digit). With n
points of which m were fabricated (a fraction f), P(miss) = C(n-m, k)/C(n, k) <= (1-f)^k: k = 6 on the
largest curve catches f >= 0.54 with probability >= 0.99 (k >= ln 0.01 / ln(1-f)), k = 7 (f = 0.5) with the
minimum; the secret replay is recomputed whole (f > 0 is caught).

For two electrons CCSD equals full CI within the basis, so E_total is recomputed as CCSD (FCI is far slower
in a QZ basis) and E_HF as RHF; the atom is UHF (exact for one electron in the basis). A bond length written
with few decimals widens the tolerance by what that rounding can move the energy (the curve's slope times
half the last decimal, counted as at least three decimals and capped).

Runs without the workbench: only the standard library, NumPy and PySCF.
"""

from __future__ import annotations

import csv
import io
import json
import random
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


CHEAP = {(2, False), (3, False), (4, False), (2, True), (3, True)}  # <= 1 CPU s a point: recomputed whole


def _picks(rng: random.Random, n: int, exclude: set[int], count: int) -> list[int]:
    """``count`` distinct indices in range(n), not in ``exclude``, chosen with the scoring's seed."""
    free = [i for i in range(n) if i not in exclude]
    return rng.sample(free, min(count, len(free)))


def _h2(r: float, basis: str) -> tuple[float, float]:
    from pyscf import cc, gto, scf

    mol = gto.M(atom=f"H 0 0 0; H 0 0 {r!r}", unit="Bohr", basis=basis, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-11)
    return float(mf.e_tot), float(cc.CCSD(mf).run(conv_tol=1e-10).e_tot)


def _h_atom(basis: str) -> float:
    from pyscf import gto, scf

    mol = gto.M(atom="H 0 0 0", basis=basis, spin=1, verbose=0)
    return float(scf.UHF(mol).run(conv_tol=1e-11).e_tot)


def _compare(todo, tolerance: float, label: str) -> tuple[int, list[str]]:
    bad, lines = 0, []
    for basis, r, e_hf, e_tot, allowance in todo:
        hf, tot = _h2(r, basis)
        ok = abs(hf - e_hf) <= tolerance + allowance and abs(tot - e_tot) <= tolerance + allowance
        bad += not ok
        if not ok or len(lines) < 3:
            lines.append(f"{label} {basis} R={r:g}: E_HF {e_hf:.8f} vs {hf:.8f}, E_total {e_tot:.8f} vs {tot:.8f} "
                         f"({'ok' if ok else 'MISMATCH'})")
    return bad, lines


def _atom(results: Path, largest: str, tolerance: float, label: str) -> tuple[int, int, str]:
    conv = results / "convergence.csv"
    if not conv.is_file():
        return 0, 0, ""
    e_h = {r.get("basis", "").lower(): r.get("E_H", "") for r in _rows(conv)}
    if largest not in e_h:
        return 0, 0, ""
    mine = _h_atom(largest)
    try:
        theirs = float(e_h[largest])
        ok = abs(mine - theirs) <= tolerance
    except ValueError:
        theirs, ok = e_h[largest], False
    return 1, int(not ok), f"{label} {largest} H atom: E_H {theirs} vs {mine:.8f} ({'ok' if ok else 'MISMATCH'})"


def curve_points(evidence: Path, seed: int = 0, tolerance: float = 1e-5, extra_largest: int = 6,
                 per_other: int = 3, k_costly: int = 4, rounding_cap: float = 5e-5) -> dict:
    rng = random.Random(seed)
    checked, bad, lines = 0, 0, []
    for label, results in (("secret", evidence / "secret" / "submission" / "results"),
                           ("public", evidence / "submission" / "results")):
        curves = _curves(results)
        if not curves:
            return {"score": 0.0, "rationale": f"no correlation-consistent curve in the {label} replay's results"}
        largest = max(curves, key=lambda b: (curves[b][0], curves[b][1], b))
        todo: list[tuple[str, float, float, float, float]] = []  # (basis, R, E_HF, E_total, allowance)
        if label == "secret":
            drawn = sorted(round(float(x), 4) for x in
                           json.loads((evidence / "secret/replay/input/inputs.json").read_text())["R_bohr"])
        for basis, (card, aug, path) in sorted(curves.items()):
            pts = _points(path)
            if label == "secret":
                if sorted(round(p[0], 4) for p in pts) != drawn:
                    return {"score": 0.0, "rationale": f"secret replay: {path.name}'s bond lengths "
                                                       f"{[p[0] for p in pts]} are not the drawn {drawn}"}
                chosen = list(range(len(pts))) if (card, aug) in CHEAP else _picks(rng, len(pts), set(), k_costly)
            elif basis == largest:
                i_min = min(range(len(pts)), key=lambda i: pts[i][2])
                chosen = [i_min, *_picks(rng, len(pts), {i_min}, extra_largest)]
            else:
                chosen = _picks(rng, len(pts), set(), per_other)
            todo += [(basis, *pts[i][:3], _rounding_allowance(pts, i, rounding_cap)) for i in chosen]
        b, ls = _compare(todo, tolerance, label)
        checked += len(todo)
        bad += b
        lines += ls
        n, b, line = _atom(results, largest, tolerance, label)
        checked += n
        bad += b
        lines += [line] if line else []
    score = (checked - bad) / checked if checked else 0.0
    head = (f"{checked - bad} of {checked} recomputed energies (every point of the secret replay's curves, "
            f"seed-chosen points of the first) agree with the submitted raw data within {tolerance:g} Eh: ")
    return {"score": score, "rationale": head + "; ".join(lines),
            "refs": ["secret/submission/results/", "submission/results/"]}
