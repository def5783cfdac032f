"""Task checks for si-eos-qe (PRIVATE). Everything is read from the raw pw.x outputs: the functional,
the structure, the cutoff and k-point count of each run, its energy and convergence. The scorer refits
the equation of state from those energies, and the validation group is gated on the EOS having been
computed in LDA, for diamond Si, at converged settings.

The outputs are only worth reading when pw.x wrote them: the root gate ``pw_outputs_by_pwx`` asks the
replay's execution receipts that every ``results/scf/*.out`` was left, as frozen, by a pw.x process of the
replay (or the MPI daemon that pw.x started for itself), a different process per file, that spent real
CPU time on it (at least half the CPU time the output itself reports), and that each file holds exactly
one complete PWSCF run. A template, a cache, an edit or a copy fails it; so does fabricated text handed to
a pw.x that is stopped before it computes."""

from __future__ import annotations

import re

import numpy as np

from workbench.evidence import MissingEvidence, read_manifest
from workbench.scoring import CheckOutcome, task_check
from workbench.scoring.receipt_checks import receipts_of

BOHR_TO_ANG = 0.529177
RY_PER_BOHR3_TO_GPA = 14710.507848
CONVERGED_ECUT, CONVERGED_NK = 24.0, 16  # 1 mRy/atom (measured); 16 irreducible points = 6x6x6 for fcc
MIN_PWX_CPU = 0.03  # CPU s of the pw.x process behind each output; a real 10 Ry, 2x2x2 run takes 0.09 s
GAMMA = r"k\(\s*1\) = \(\s*-?0\.0000000\s+-?0\.0000000\s+-?0\.0000000\), wk =\s*([\d.]+)"  # unshifted: 2/n^3
BANNER = re.compile(r"^\s*Program PWSCF v\.\S+ starts on", re.M)


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
            "gamma_weight": _num(GAMMA, text),
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


def _study(ev, path: str, column: str, min_points: int, tol_mry_atom: float, setting: str):
    """A convergence table whose every row is a distinct pw.x run: the row's energy and setting are those of
    one output (``setting``: the output's cutoff for the cutoff study; for the k study the meshes must give
    strictly more irreducible points as they grow), all runs at one lattice constant and the other setting
    fixed. Returns (problems, last change in mRy/atom, the value converged from)."""
    df = ev.read_csv(path)
    if column not in df.columns or "energy_Ry" not in df.columns:
        raise MissingEvidence(f"submission/{path}", f"needs {column} and energy_Ry")
    problems = []
    values = [float(v) for v in df[column]]
    if len(set(values)) != len(values):
        problems.append(f"repeated {column} values {sorted(v for v in set(values) if values.count(v) > 1)}")
    if len(set(values)) < min_points:
        problems.append(f"{len(set(values))} distinct {column} values (need {min_points})")
    all_runs = [r for r in runs(ev) if r["energy"] is not None]
    used, matched = set(), []
    for v, e in sorted(zip(values, df["energy_Ry"].astype(float), strict=True)):
        cands = [r for r in all_runs if abs(r["energy"] - e) < 1e-6 and r["path"] not in used
                 and (setting != "ecut" or r["ecut"] == v)]
        if not cands:
            problems.append(f"{column} {v:g}: no distinct pw.x output with energy {e}"
                            + (f" at {v:g} Ry" if setting == "ecut" else ""))
            continue
        used.add(cands[0]["path"])
        matched.append((v, e, cands[0]))
    if matched:
        if len({r["alat"] for _, _, r in matched}) > 1:
            problems.append("the runs are not at one lattice constant")
        other = "nk" if setting == "ecut" else "ecut"
        if len({r[other] for _, _, r in matched}) > 1:
            problems.append(f"the runs do not share one {'k-point set' if other == 'nk' else 'cutoff'}")
        if setting == "k":
            nks = [r["nk"] or 0 for _, _, r in matched]
            if any(b <= a for a, b in zip(nks, nks[1:], strict=False)):
                problems.append(f"irreducible k-points {nks} do not grow with the mesh")
            for v, _, r in matched:  # an unshifted n x n x n mesh gives Gamma the weight 2/n^3 (pw.x weights sum to 2)
                if r["gamma_weight"]:
                    n = (2 / r["gamma_weight"]) ** (1 / 3)
                    if abs(n - v) > 0.02 * v:
                        problems.append(f"kmesh {v:g}: its output's k-points are a {n:.0f}x{n:.0f}x{n:.0f} mesh")
    e = np.array([e for _, e, _ in matched])
    change = abs(e[-1] - e[-2]) / 2 * 1000 if len(e) >= 2 else float("inf")  # mRy per atom
    converged_at = next((v for v, ei, _ in matched if abs(ei - e[-1]) / 2 * 1000 <= tol_mry_atom), None)
    if change > tol_mry_atom:
        problems.append(f"last change {change:.2f} mRy/atom")
    return problems, change, converged_at


@task_check
def ecut_study(ev, min_points: int = 4, tol_mry_atom: float = 1.0) -> CheckOutcome:
    problems, change, conv = _study(ev, "results/convergence_ecut.csv", "ecutwfc_Ry", min_points, tol_mry_atom,
                                    "ecut")
    _, _, matched = _ev(ev)
    eos_ecut = min((r["ecut"] or 0 for r in matched if r), default=0)
    if conv is None or eos_ecut < conv:
        problems.append(f"EOS at {eos_ecut} Ry, converged from {conv} Ry")
    return _result(not problems, "; ".join(problems) or f"distinct pw.x runs; last change {change:.2f} mRy/atom; "
                   f"converged from {conv} Ry; EOS at {eos_ecut} Ry", ["submission/results/convergence_ecut.csv"])


@task_check
def k_study(ev, min_points: int = 3, tol_mry_atom: float = 1.0) -> CheckOutcome:
    problems, change, conv = _study(ev, "results/convergence_k.csv", "kmesh", min_points, tol_mry_atom, "k")
    if conv is None:
        problems.append("no converged mesh")
    return _result(not problems, "; ".join(problems) or f"distinct pw.x runs; last change {change:.2f} mRy/atom; "
                   f"converged from {conv}", ["submission/results/convergence_k.csv"])


@task_check
def pw_outputs_by_pwx(ev, min_files: int = 1) -> CheckOutcome:
    """Gate: pw.x itself wrote every output, each in its own run with real CPU time, one run per file."""
    r = receipts_of(ev)
    procs = r.by_key()
    frozen = {k: v for k, v in read_manifest(ev.root).items()
              if k.startswith("submission/results/scf/") and k.endswith(".out")}
    if not frozen:
        raise MissingEvidence("submission/results/scf/*.out", "no pw.x outputs")
    problems, owners = [], {}
    for rel in sorted(frozen):
        name = rel.rsplit("/", 1)[-1]
        writes = r.writes_of(rel)
        if not writes:
            problems.append(f"{name}: no recorded process wrote it")
            continue
        runs_behind = set()
        for w in writes:
            run = r.executed_by(w) if r.writer_is(w, program="pw.x") else None
            if run is None:
                problems.append(f"{name}: written by {r.writer_name(w)}, not by pw.x")
            else:
                runs_behind.add(run.key)
        if len(runs_behind) != 1:
            continue
        run = procs[runs_behind.pop()]
        if run.key in owners:
            problems.append(f"{name}: the same pw.x process also left {owners[run.key]}")
        owners[run.key] = name
        text = ev.read_text(rel)
        banners = BANNER.findall(text)
        first = next((line for line in text.splitlines() if line.strip()), "")
        tail = text.rstrip().splitlines()[-2:] if text.strip() else []
        if len(banners) != 1 or not BANNER.match(first) or not any("JOB DONE" in t for t in tail):
            problems.append(f"{name}: not one complete PWSCF run ({len(banners)} banner(s), "
                            f"{'ends' if any('JOB DONE' in t for t in tail) else 'does not end'} with JOB DONE)")
        reported = _num(r"PWSCF\s+:\s+([\d.]+)s CPU", text) or 0.0
        if run.cpu_sec < max(MIN_PWX_CPU, 0.5 * reported):
            problems.append(f"{name}: its pw.x process used {run.cpu_sec:.2f} CPU s; the output reports "
                            f"{reported:.2f} s")
    if len(frozen) < min_files:
        problems.append(f"{len(frozen)} outputs (need {min_files})")
    more = f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""
    return _result(not problems, "; ".join(problems[:4]) + more
                   if problems else f"{len(frozen)} outputs, each left by its own pw.x run "
                   f"({sum(procs[p].cpu_sec for p in owners):.1f} CPU s in all)",
                   [*sorted(frozen)[:5], "replay/receipts.json"])


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
