"""Spot recomputation for si-eos-qe (PRIVATE; runs in the task's environment, confined).

The scorer re-runs pw.x itself on the submission's inputs of its equation-of-state points and scores its
OWN run: the settings and the total energy are read from the XML data file the scorer's pw.x wrote (never
from a log, which echoes the submission's prefix and directories), with the scorer's own prefix, outdir and
the system's pseudopotential directory substituted into the input and any title dropped. For each
recomputed point the scorer's run must be LDA (PZ), diamond Si (ibrav 2, 2 atoms), at the row's lattice
constant, at a converged cutoff and mesh (>= 24 Ry, >= 16 irreducible k-points), and give the submitted
energy within 1e-6 Ry (identical inputs give identical energies: 0.0 measured).

Which points:
- the second (secret) replay: EVERY row of its ev.csv, whose lattice constants were drawn for that replay
  alone (and must be exactly those of secret/replay/input/inputs.json): a cache or a fit to known answers
  cannot follow them;
- the first replay: the lowest-energy row and ``public_k`` more chosen with ``seed``, a fresh random number
  per scoring that the submission cannot see or steer (never a digest of what it submitted). With n rows of
  which m were fabricated (a fraction f), P(miss) = C(n-m, k)/C(n, k) <= (1-f)^k; k = 4 of the 8 other rows
  catches f >= 0.7 with probability >= 0.99 (k >= ln 0.01 / ln(1-f)). The first replay's points are
  besides bound by its receipts (each energy is in a data file pw.x wrote, gate G1), and the same code
  ran both replays, so the secret replay's full recomputation is the main test.

Cost: one converged point (30 Ry, 8x8x8) takes 1.4 CPU s; 9 + 5 points ~20-40 s.
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

from workbench.parsers import plain_name, pwscf_xml

PSEUDO_DIR = "/usr/share/espresso/pseudo"
CONVERGED_ECUT, CONVERGED_NK = 24.0, 16
OWN = re.compile(r"(?i)\b(outdir|prefix|title|wfcdir|pseudo_dir)\s*=\s*(['\"]).*?\2[ \t]*,?")


def _rows(results: Path) -> list[tuple[float, float]]:
    with open(results / "ev.csv", newline="") as fh:
        return [(float(r["alat_bohr"]), float(r["energy_Ry"])) for r in csv.DictReader(fh)]


def _data_files(results: Path) -> list[tuple[Path, dict]]:
    out = []
    for p in sorted((results / "scf").glob("*.xml")):
        if not plain_name(p.stem):
            continue
        try:
            out.append((p, pwscf_xml(p, max_bytes=5_000_000)))
        except (ValueError, OSError):
            continue
    return out


def _run_of(files, alat: float, energy: float) -> Path | None:
    for p, d in files:
        if d["alat"] is not None and d["etot"] is not None and abs(d["alat"] - alat) < 5e-4 \
                and abs(d["etot"] - energy) < 1e-6:
            return p
    return None


def _rerun(inp: Path, work: Path, timeout: float) -> dict:
    """pw.x on the submitted input with the scorer's own prefix, outdir and pseudopotential directory;
    what the scorer's pw.x recorded in its own data file."""
    text = inp.read_text(errors="replace")
    if len(text) > 100_000:
        raise ValueError(f"{inp.name}: not a plausible pw.x input ({len(text)} bytes)")
    shutil.rmtree(work / "out", ignore_errors=True)
    text = OWN.sub("", text)
    own = f"  prefix = 'scorer', outdir = '{work}/out', pseudo_dir = '{PSEUDO_DIR}'\n"
    # appended at the end of &control: in a namelist the last assignment wins
    text, n = re.subn(r"(?ims)(^\s*&control\b.*?^)(\s*/\s*$)", lambda m: m.group(1) + own + m.group(2), text,
                      count=1)
    if not n:
        text = f"&control\n{own}/\n" + text
    (work / "rerun.in").write_text(text)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OMPI_MCA_ess_singleton_isolated": "1",
           "ESPRESSO_TMPDIR": str(work / "out")}
    subprocess.run(["pw.x", "-input", str(work / "rerun.in")], cwd=work, capture_output=True, text=True,
                   timeout=timeout, env=env)
    xml = work / "out" / "scorer.xml"
    if not xml.is_file():
        raise ValueError(f"pw.x on the submitted {inp.name} wrote no data file (it failed or did not converge)")
    return pwscf_xml(xml)


def _check(results: Path, picked: list[int], rows, work: Path, timeout: float, tol: float, label: str):
    files = _data_files(results)
    notes, ok = [], True
    for i in picked:
        alat, energy = rows[i]
        out = _run_of(files, alat, energy)
        if out is None:
            return False, [f"{label} a = {alat}: no pw.x data file (plain name) with that lattice constant and "
                           f"energy {energy}"]
        inp = out.with_suffix(".in")
        if not inp.is_file():
            return False, [f"{label} {out.name}: its input {inp.name} is not in results/scf/"]
        try:
            d = _rerun(inp, work, timeout)
        except (ValueError, subprocess.TimeoutExpired) as exc:
            return False, [f"{label} {inp.name}: {exc}"]
        bad = []
        if d["functional"] != "PZ" or d["ibrav"] != 2 or d["nat"] != 2 or d["species"] != ["Si"]:
            bad.append(f"{d['functional']}, ibrav {d['ibrav']}, {d['nat']} atoms {d['species']}")
        if (d["pseudo_dir"] or "").rstrip("/") != PSEUDO_DIR:
            bad.append(f"pseudopotentials from {d['pseudo_dir']}")
        if d["alat"] is None or abs(d["alat"] - alat) > 5e-4:
            bad.append(f"alat {d['alat']}")
        if (d["ecutwfc"] or 0) < CONVERGED_ECUT or (d["nks"] or 0) < CONVERGED_NK:
            bad.append(f"{d['ecutwfc']} Ry, {d['nks']} k-points")
        de = abs(d["etot"] - energy) if d["etot"] is not None else float("inf")
        if de > tol:
            bad.append(f"|dE| = {de:.1e} Ry")
        ok &= not bad
        notes.append(f"{label} {inp.name} (a = {alat}): scorer's {d['etot']:.8f} Ry vs {energy:.8f} Ry"
                     + (f" [{'; '.join(bad)}]" if bad else ""))
    return ok, notes


def eos_points(evidence: Path, seed: int = 0, tolerance_ry: float = 1e-6, public_k: int = 4,
               timeout_per_run: float = 60.0) -> dict:
    work = Path("/tmp/recompute-si")
    work.mkdir(parents=True, exist_ok=True)
    notes, ok = [], True
    # the secret replay: every point, at the lattice constants drawn for it
    secret = evidence / "secret" / "submission" / "results"
    if not (secret / "ev.csv").is_file():
        return {"score": 0.0, "rationale": "fail: the secret replay left no results/ev.csv"}
    drawn = json.loads((evidence / "secret" / "replay" / "input" / "inputs.json").read_text())["alat_bohr"]
    srows = _rows(secret)
    if sorted(round(a, 4) for a, _ in srows) != sorted(round(float(a), 4) for a in drawn):
        return {"score": 0.0, "rationale": f"fail: the secret replay's ev.csv lattice constants "
                                           f"{sorted(a for a, _ in srows)} are not the drawn {sorted(drawn)}"}
    good, lines = _check(secret, list(range(len(srows))), srows, work, timeout_per_run, tolerance_ry, "secret")
    ok &= good
    notes += lines
    # the first replay: the lowest-energy row and public_k more, chosen with the scoring's seed
    results = evidence / "submission" / "results"
    rows = _rows(results)
    if len(rows) < 2:
        return {"score": 0.0, "rationale": f"fail: ev.csv has {len(rows)} rows"}
    order = sorted(range(len(rows)), key=lambda i: rows[i][1])
    picked = [order[0], *random.Random(seed).sample(order[1:], min(public_k, len(order) - 1))]
    good, lines = _check(results, picked, rows, work, timeout_per_run, tolerance_ry, "public")
    ok &= good
    notes += lines
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + "; ".join(notes),
            "refs": ["secret/submission/results/ev.csv", "submission/results/ev.csv", "submission/results/scf/"]}
