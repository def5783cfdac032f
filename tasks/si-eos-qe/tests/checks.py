"""Task checks for si-eos-qe (PRIVATE). Everything is read from pw.x's own XML data files
(``results/scf/<name>.xml``, through :func:`workbench.parsers.pwscf_xml`): the functional, the structure, the
cutoff, k-point mesh and count of each run, its energy and convergence. The logs are not parsed for values:
pw.x echoes the submission's prefix and directories in them (a prefix spelling "number of k points= 29"
was read as the run's setting by the former last-match regexes), while the data file escapes every copied
string. Names must be plain (letters, digits, ``_ . + -``). The scorer refits
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
from workbench.parsers import first_number, plain_name, pwscf_xml
from workbench.scoring import CheckOutcome, task_check
from workbench.scoring.receipt_checks import receipts_of

BOHR_TO_ANG = 0.529177
RY_PER_BOHR3_TO_GPA = 14710.507848
CONVERGED_ECUT, CONVERGED_NK = 24.0, 16  # 1 mRy/atom (measured); 16 irreducible points = 6x6x6 for fcc
MIN_PWX_CPU = 0.03  # CPU s of the pw.x process behind each output; a real 10 Ry, 2x2x2 run takes 0.09 s
BANNER = re.compile(r"^\s*Program PWSCF v\.\S+ starts on", re.M)


def _result(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(float(bool(ok)), ("pass: " if ok else "fail: ") + text, refs)


def runs(ev, top: str = "submission") -> list[dict]:
    """Every pw.x data file under results/scf (of the first replay, or ``top="secret/submission"``): what it
    ran and what it got, as pw.x recorded it. A file pw.x could not have written reads as empty."""
    out = []
    for path in ev.glob(f"{top}/results/scf/*.xml"):
        name = path.rsplit("/", 1)[1][: -len(".xml")]
        try:
            d = pwscf_xml(ev.resolve(path))
        except (ValueError, OSError) as exc:
            d = {"error": str(exc)}
        out.append({
            "path": path, "name": name, "plain": plain_name(name) and d.get("prefix") == name,
            "xc": d.get("functional") or "", "ibrav": d.get("ibrav"), "nat": d.get("nat"),
            "species": d.get("species"), "alat": d.get("alat"), "ecut": d.get("ecutwfc"), "nk": d.get("nks"),
            "k_mesh": d.get("k_mesh"), "energy": d.get("etot"), "converged": bool(d.get("converged")),
            "done": d.get("status") == 0, "version": d.get("version"), "cpu": d.get("cpu_sec"),
            "error": d.get("error"),
        })
    if not out:
        raise MissingEvidence(f"{top}/results/scf/*.xml", "no pw.x data files")
    return out


def _ev(ev, top: str = "submission") -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """The EOS points of ev.csv, each matched to the pw.x run that produced it."""
    df = ev.read_csv(f"{top}/results/ev.csv")
    for col in ("alat_bohr", "energy_Ry"):
        if col not in df.columns:
            raise MissingEvidence(f"{top}/results/ev.csv:{col}", "column not found")
    all_runs = [r for r in runs(ev, top) if r["alat"] is not None and r["energy"] is not None]
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
    ok = xcs == ["PZ"]
    return _result(ok, f"functionals in pw.x's data files: {xcs}", ["submission/results/scf/"])


@task_check
def diamond_si(ev) -> CheckOutcome:
    bad = [r["path"] for r in runs(ev) if r["ibrav"] != 2 or r["nat"] != 2 or r["species"] != ["Si"]]
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
    return _result(bool(versions), f"pw.x versions in its data files: {versions}", ["submission/results/scf/"])


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
            for v, _, r in matched:  # the row's mesh is the Monkhorst-Pack mesh pw.x recorded
                if r["k_mesh"] is None or r["k_mesh"][:3] != [round(v)] * 3:
                    problems.append(f"kmesh {v:g}: its run's mesh is {r['k_mesh']}")
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


def _pwx_runs(r, rel: str, problems: list[str]) -> set:
    """The pw.x runs (receipt keys) that wrote ``rel``; empty (with the reason in ``problems``) when a writer
    is not pw.x. More than one: a file's inode freed by a run's scratch and reused by a later run's output."""
    name = rel.rsplit("/", 1)[-1]
    writes = r.writes_of(rel)
    if not writes:
        problems.append(f"{name}: no recorded process wrote it")
        return set()
    behind = set()
    for w in writes:
        run = r.executed_by(w) if r.writer_is(w, program="pw.x") else None
        if run is None:
            problems.append(f"{name}: written by {r.writer_name(w)}, not by pw.x")
            return set()
        behind.add(run.key)
    return behind


@task_check
def pw_outputs_by_pwx(ev, min_files: int = 1) -> CheckOutcome:
    """Gate: pw.x itself wrote every output and its data file, each run's pair in its own run with real CPU
    time, one run per file, under a plain name."""
    r = receipts_of(ev)
    procs = r.by_key()
    manifest = read_manifest(ev.root)
    frozen = {k: v for k, v in manifest.items()
              if k.startswith("submission/results/scf/") and k.endswith(".out")}
    if not frozen:
        raise MissingEvidence("submission/results/scf/*.out", "no pw.x outputs")
    problems, owners = [], {}
    xmls = {k for k in manifest if k.startswith("submission/results/scf/") and k.endswith(".xml")}
    for rel in sorted(xmls - {k[: -len(".out")] + ".xml" for k in frozen}):
        problems.append(f"{rel.rsplit('/', 1)[-1]}: a data file without its .out")
    for rel in sorted(frozen):
        name = rel.rsplit("/", 1)[-1]
        stem = name[: -len(".out")]
        if not plain_name(stem):
            problems.append(f"{name!r}: not a plain name (letters, digits, _ . + -)")
            continue
        out_runs = _pwx_runs(r, rel, problems)
        if not out_runs:
            continue
        xml = rel[: -len(".out")] + ".xml"
        if xml not in manifest:
            problems.append(f"{name}: no data file {stem}.xml (outdir = 'results/scf', prefix = '{stem}')")
            continue
        xml_runs = _pwx_runs(r, xml, problems)
        if len(xml_runs) != 1 or not xml_runs <= out_runs:
            problems.append(f"{stem}.xml: not written by one pw.x run that also wrote {name}")
            continue
        key = next(iter(xml_runs))
        run = procs[key]
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
        try:
            d = pwscf_xml(ev.resolve(xml))
        except ValueError as exc:
            problems.append(f"{stem}.xml: {exc}")
            continue
        if d["prefix"] != stem:
            problems.append(f"{stem}.xml: its run's prefix is {d['prefix']!r}")
        reported = d["cpu_sec"] or first_number(r"^\s*PWSCF\s+:\s+([\d.]+)s CPU", text) or 0.0
        if run.cpu_sec < max(MIN_PWX_CPU, 0.5 * reported):
            problems.append(f"{name}: its pw.x process used {run.cpu_sec:.2f} CPU s; the run reports "
                            f"{reported:.2f} s")
    if len(frozen) < min_files:
        problems.append(f"{len(frozen)} outputs (need {min_files})")
    more = f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""
    return _result(not problems, "; ".join(problems[:4]) + more
                   if problems else f"{len(frozen)} outputs and data files, each pair left by its own pw.x run "
                   f"({sum(procs[p].cpu_sec for p in owners):.1f} CPU s in all)",
                   [*sorted(frozen)[:5], "replay/receipts.json"])


def _inputs(ev, top: str) -> dict:
    rel = ("secret/" if top.startswith("secret") else "") + "replay/input/inputs.json"
    d = ev.read_json(rel)
    return {"alat_bohr": [float(a) for a in d["alat_bohr"]], "convergence_alat_bohr": float(d["convergence_alat_bohr"])}


@task_check
def inputs_followed(ev, replay: str = "public", a_tol: float = 0.005, b_tol: float = 2.0) -> CheckOutcome:
    """Gate: the replay computed what its inputs.json held. ``replay="secret"`` reads the second replay, whose
    lattice constants were drawn for it alone: ev.csv's rows are exactly the drawn lattice constants, each
    the energy of a converged LDA pw.x data file of that replay at that lattice constant, any other run (the
    convergence studies) ran at the drawn convergence lattice constant, and eos.json's a0 (and B0 where
    reported) is the refit of those energies."""
    top = "secret/submission" if replay == "secret" else "submission"
    want = _inputs(ev, top)
    alat, energy, matched = _ev(ev, top)
    problems = []
    if len(alat) != len(want["alat_bohr"]) or any(abs(a - b) > 5e-5 for a, b in
                                                   zip(sorted(alat), sorted(want["alat_bohr"]), strict=False)):
        problems.append(f"ev.csv's lattice constants {sorted(alat.tolist())} are not inputs.json's "
                        f"{sorted(want['alat_bohr'])}")
    for (a, r) in zip(alat, matched, strict=True):
        if r is None:
            problems.append(f"a = {a}: no pw.x data file with that energy")
        elif r["xc"] != "PZ" or r["ibrav"] != 2 or r["nat"] != 2 or (r["ecut"] or 0) < CONVERGED_ECUT \
                or (r["nk"] or 0) < CONVERGED_NK or not r["converged"]:
            problems.append(f"{r['name']}: {r['xc']}, ibrav {r['ibrav']}, {r['ecut']} Ry, {r['nk']} k-points")
    conv = [x for x in runs(ev, top) if x["name"] not in {m["name"] for m in matched if m}]
    if any(x["alat"] is None or abs(x["alat"] - want["convergence_alat_bohr"]) > 5e-5 for x in conv):
        problems.append(f"convergence runs not at inputs.json's {want['convergence_alat_bohr']} bohr: "
                        f"{sorted({x['alat'] for x in conv}, key=str)[:4]}")
    if not problems:
        fit = refit(alat, energy)
        d = ev.read_json(f"{top}/results/eos.json")
        try:  # a0 is required; B0 where reported (its absence is scored on the first replay)
            a0 = float(d["a0_angstrom"])
            b0 = float(d["B0_GPa"]) if d.get("B0_GPa") is not None else fit["B0_GPa"]
        except (KeyError, TypeError, ValueError, AttributeError):
            a0 = b0 = float("nan")
        if not (abs(a0 - fit["a0_angstrom"]) <= a_tol and abs(b0 - fit["B0_GPa"]) <= b_tol):
            problems.append(f"eos.json a0 {a0} A, B0 {b0} GPa; refit {fit['a0_angstrom']:.4f} A, "
                            f"{fit['B0_GPa']:.1f} GPa")
    return _result(not problems, "; ".join(problems[:4]) or
                   f"{replay} replay: ev.csv holds inputs.json's {len(alat)} lattice constants, each a converged "
                   f"LDA pw.x run; convergence runs at {want['convergence_alat_bohr']} bohr; eos.json is their refit",
                   [f"{top}/results/ev.csv", f"{top}/results/scf/",
                    ("secret/" if replay == "secret" else "") + "replay/input/inputs.json"])


@task_check
def converged_lda_eos(ev) -> CheckOutcome:
    """Gate: every EOS point comes from a pw.x run in LDA, for diamond Si, at a converged cutoff and mesh."""
    _, _, matched = _ev(ev)
    problems = []
    if any(r is None for r in matched):
        problems.append("ev.csv energies not found in the pw.x outputs")
    for r in filter(None, matched):
        if r["xc"] != "PZ":
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
