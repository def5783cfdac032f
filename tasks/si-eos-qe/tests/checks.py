"""Task checks for si-eos-qe (PRIVATE). Everything is read from the raw pw.x outputs: the functional,
the structure, the cutoff and k-point count of each run, its energy and convergence. The scorer refits
the equation of state from those energies, and the validation group is gated on the EOS having been
computed in LDA, for diamond Si, at converged settings."""

from __future__ import annotations

import re

import numpy as np

from workbench.evidence import MissingEvidence
from workbench.scoring import CheckOutcome, task_check

BOHR_TO_ANG = 0.529177
RY_PER_BOHR3_TO_GPA = 14710.507848
CONVERGED_ECUT, CONVERGED_NK = 24.0, 16  # 1 mRy/atom (measured); 16 irreducible points = 6x6x6 for fcc


def _result(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(float(bool(ok)), ("pass: " if ok else "fail: ") + text, refs)


def _num(pattern: str, text: str):
    m = re.findall(pattern, text, re.M)
    return float(m[-1]) if m else None


def runs(ev) -> list[dict]:
    """Every pw.x output under results/scf: what it ran and what it got."""
    out = []
    for path in ev.glob("results/scf/*.out"):
        text = ev.read_text(path)
        out.append({
            "path": path,
            "xc": (re.findall(r"Exchange-correlation\s*=\s*(.+)", text) or [""])[-1].split("(")[0].strip(),
            "ibrav": _num(r"bravais-lattice index\s*=\s*(\d+)", text),
            "nat": _num(r"number of atoms/cell\s*=\s*(\d+)", text),
            "alat": _num(r"lattice parameter \(alat\)\s*=\s*([\d.]+)\s*a\.u\.", text),
            "ecut": _num(r"kinetic-energy cutoff\s*=\s*([\d.]+)\s*Ry", text),
            "nk": _num(r"number of k points\s*=\s*(\d+)", text),
            "energy": _num(r"^!\s+total energy\s+=\s+(-?\d+\.\d+) Ry", text),
            "converged": "convergence has been achieved" in text,
            "done": "JOB DONE" in text,
            "version": (re.findall(r"Program PWSCF (v\.\S+)", text) or [None])[-1],
        })
    if not out:
        raise MissingEvidence("submission/results/scf/*.out", "no pw.x outputs")
    return out


def _ev(ev) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """The EOS points of ev.csv, each matched to the pw.x run that produced it."""
    df = ev.read_csv("results/ev.csv")
    for col in ("alat_bohr", "energy_Ry"):
        if col not in df.columns:
            raise MissingEvidence(f"submission/results/ev.csv:{col}", "column not found")
    all_runs = [r for r in runs(ev) if r["alat"] is not None and r["energy"] is not None]
    matched = []
    for a, e in zip(df["alat_bohr"], df["energy_Ry"], strict=True):
        cands = [r for r in all_runs if abs(r["alat"] - a) < 5e-4 and abs(r["energy"] - e) < 1e-6]
        matched.append(cands[0] if cands else None)
    return df["alat_bohr"].to_numpy(float), df["energy_Ry"].to_numpy(float), matched


def refit(alat: np.ndarray, energy: np.ndarray) -> dict:
    """Third-order Birch-Murnaghan: a cubic in x = V^(-2/3)."""
    v = alat ** 3 / 4
    c = np.polyfit(v ** (-2 / 3), energy, 3)
    grid = np.linspace(v.min(), v.max(), 200001)
    e = np.polyval(c, grid ** (-2 / 3))
    i = int(np.argmin(e))
    v0, h = grid[i], 1e-3 * grid[i]
    d2 = (np.polyval(c, (v0 + h) ** (-2 / 3)) - 2 * e[i] + np.polyval(c, (v0 - h) ** (-2 / 3))) / h ** 2
    return {"a0_angstrom": (4 * v0) ** (1 / 3) * BOHR_TO_ANG, "B0_GPa": v0 * d2 * RY_PER_BOHR3_TO_GPA,
            "interior": 0 < i < len(grid) - 1}


@task_check
def lda(ev) -> CheckOutcome:
    xcs = sorted({r["xc"] for r in runs(ev)})
    ok = bool(xcs) and all(re.match(r"SLA\s+PZ\s+NOGX\s+NOGC", x) for x in xcs)
    return _result(ok, f"exchange-correlation in the pw.x outputs: {xcs}", ["submission/results/scf/"])


@task_check
def diamond_si(ev) -> CheckOutcome:
    bad = [r["path"] for r in runs(ev) if r["ibrav"] != 2 or r["nat"] != 2]
    return _result(not bad, "every run: fcc (ibrav 2) with 2 atoms" if not bad else f"other structures: {bad[:3]}",
                   ["submission/results/scf/"])


@task_check
def ev_grid(ev, min_points: int = 7, min_span: float = 0.02) -> CheckOutcome:
    alat, energy, _ = _ev(ev)
    i = int(np.argmin(energy))
    a_min = alat[i]
    span = min(a_min - alat.min(), alat.max() - a_min) / a_min
    ok = len(alat) >= min_points and 0 < i < len(alat) - 1 and span >= min_span - 1e-9
    return _result(ok, f"{len(alat)} points, minimum at {a_min} bohr, span ±{100 * span:.1f} %",
                   ["submission/results/ev.csv"])


@task_check
def eos_declared(ev) -> CheckOutcome:
    name = str(ev.read_json("results/eos.json").get("eos", ""))
    return _result("murnaghan" in name.lower(), f"eos = {name!r}", ["submission/results/eos.json"])


@task_check
def pw_version(ev) -> CheckOutcome:
    versions = sorted({r["version"] for r in runs(ev) if r["version"]})
    return _result(bool(versions), f"pw.x versions in the outputs: {versions}", ["submission/results/scf/"])


@task_check
def all_runs_finished(ev) -> CheckOutcome:
    rs = runs(ev)
    bad = [r["path"] for r in rs if not (r["converged"] and r["done"] and r["energy"] is not None)]
    return _result(not bad, f"{len(rs) - len(bad)} of {len(rs)} runs converged and finished", bad[:5] or
                   ["submission/results/scf/"])


def _study(ev, path: str, key: str, column: str, min_points: int, tol_ry_atom: float):
    df = ev.read_csv(path)
    if column not in df.columns or "energy_Ry" not in df.columns:
        raise MissingEvidence(f"submission/{path}", f"needs {column} and energy_Ry")
    energies = set(round(r["energy"], 6) for r in runs(ev) if r["energy"] is not None)
    raw = all(round(e, 6) in energies for e in df["energy_Ry"])
    df = df.sort_values(column)
    e = df["energy_Ry"].to_numpy(float)
    change = abs(e[-1] - e[-2]) / 2 * 1000 if len(e) >= 2 else float("inf")  # mRy per atom
    converged_at = next((v for v, ei in zip(df[column], e, strict=True) if abs(ei - e[-1]) / 2 * 1000 <= tol_ry_atom),
                        None)
    return df, raw, change, converged_at


@task_check
def ecut_study(ev, min_points: int = 4, tol_mry_atom: float = 1.0) -> CheckOutcome:
    df, raw, change, conv = _study(ev, "results/convergence_ecut.csv", "ecut", "ecutwfc_Ry", min_points, tol_mry_atom)
    _, _, matched = _ev(ev)
    eos_ecut = min((r["ecut"] for r in matched if r), default=0)
    ok = len(df) >= min_points and raw and change <= tol_mry_atom and conv is not None and eos_ecut >= conv
    return _result(ok, f"{len(df)} cutoffs (from pw.x outputs: {raw}); last change {change:.2f} mRy/atom; "
                       f"converged from {conv} Ry; EOS at {eos_ecut} Ry", ["submission/results/convergence_ecut.csv"])


@task_check
def k_study(ev, min_points: int = 3, tol_mry_atom: float = 1.0) -> CheckOutcome:
    df, raw, change, conv = _study(ev, "results/convergence_k.csv", "k", "kmesh", min_points, tol_mry_atom)
    ok = len(df) >= min_points and raw and change <= tol_mry_atom and conv is not None
    return _result(ok, f"{len(df)} meshes (from pw.x outputs: {raw}); last change {change:.2f} mRy/atom; "
                       f"converged from {conv}", ["submission/results/convergence_k.csv"])


@task_check
def converged_lda_eos(ev) -> CheckOutcome:
    """Gate: every EOS point comes from a pw.x run in LDA, for diamond Si, at a converged cutoff and mesh."""
    _, _, matched = _ev(ev)
    problems = []
    if any(r is None for r in matched):
        problems.append("ev.csv energies not found in the pw.x outputs")
    for r in filter(None, matched):
        if not re.match(r"SLA\s+PZ", r["xc"]):
            problems.append(f"{r['path']}: functional {r['xc']}")
        if r["ibrav"] != 2 or r["nat"] != 2:
            problems.append(f"{r['path']}: not diamond Si")
        if (r["ecut"] or 0) < CONVERGED_ECUT or (r["nk"] or 0) < CONVERGED_NK:
            problems.append(f"{r['path']}: ecut {r['ecut']} Ry, {r['nk']} k-points")
    return _result(not problems, "; ".join(sorted(set(problems))[:4]) or
                   f"{len(matched)} LDA points at >= {CONVERGED_ECUT} Ry and >= {CONVERGED_NK} k-points",
                   ["submission/results/ev.csv", "submission/results/scf/"])


@task_check
def refit_agrees(ev, a_tol: float = 0.005, b_tol: float = 2.0) -> CheckOutcome:
    alat, energy, _ = _ev(ev)
    fit = refit(alat, energy)
    d = ev.read_json("results/eos.json")
    try:
        a, b = float(d["a0_angstrom"]), float(d["B0_GPa"])
    except (KeyError, TypeError, ValueError):
        return _result(False, "eos.json lacks a0_angstrom or B0_GPa", ["submission/results/eos.json"])
    ok = abs(a - fit["a0_angstrom"]) <= a_tol and abs(b - fit["B0_GPa"]) <= b_tol
    return _result(ok, f"reported a0 {a:.4f} A, B0 {b:.1f} GPa; refit of the raw energies {fit['a0_angstrom']:.4f} A, "
                       f"{fit['B0_GPa']:.1f} GPa", ["submission/results/eos.json", "submission/results/ev.csv"])


@task_check
def ev_from_outputs(ev) -> CheckOutcome:
    _, _, matched = _ev(ev)
    n = sum(r is not None for r in matched)
    return _result(n == len(matched) and n > 0, f"{n} of {len(matched)} ev.csv energies appear in pw.x outputs",
                   ["submission/results/ev.csv"])
