"""Spot recomputation for si-eos-qe (PRIVATE; runs in the task's environment, confined, no workbench import).

The scorer re-runs pw.x on the submission's own inputs for two points of its equation of state (the
lowest-energy point and one more, chosen from a digest of the submitted table so it cannot be predicted)
and compares the total energy and the settings pw.x reports with the submitted output. A real pw.x run of
the same input reproduces its energy to ~1e-9 Ry; typed-in or relabelled energies do not.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import subprocess
from pathlib import Path

PATTERNS = {
    "energy": r"^!\s+total energy\s+=\s+(-?\d+\.\d+) Ry",
    "alat": r"lattice parameter \(alat\)\s*=\s*([\d.]+)\s*a\.u\.",
    "ecut": r"kinetic-energy cutoff\s*=\s*([\d.]+)\s*Ry",
    "nk": r"number of k points\s*=\s*(\d+)",
}
XC = r"Exchange-correlation\s*=\s*(.+)"


def _parse(text: str) -> dict:
    out = {}
    for key, pat in PATTERNS.items():
        m = re.findall(pat, text, re.M)
        out[key] = float(m[-1]) if m else None
    xc = re.findall(XC, text)
    out["xc"] = " ".join(xc[-1].split()) if xc else None
    return out


def _rows(results: Path) -> list[tuple[float, float]]:
    with open(results / "ev.csv", newline="") as fh:
        return [(float(r["alat_bohr"]), float(r["energy_Ry"])) for r in csv.DictReader(fh)]


def _output_of(results: Path, alat: float, energy: float) -> Path | None:
    for out in sorted((results / "scf").glob("*.out")):
        if out.stat().st_size > 5_000_000:
            continue
        p = _parse(out.read_text(errors="replace"))
        if p["alat"] is not None and p["energy"] is not None and abs(p["alat"] - alat) < 5e-4 \
                and abs(p["energy"] - energy) < 1e-6:
            return out
    return None


def _rerun(inp: Path, sub: Path, work: Path, timeout: float) -> str:
    """pw.x on the submitted input, its scratch redirected to our own directory."""
    text = inp.read_text(errors="replace")
    if len(text) > 100_000:
        raise ValueError(f"{inp.name}: not a plausible pw.x input ({len(text)} bytes)")
    scratch = f"'{work}/out'"
    text, n = re.subn(r"(?i)\boutdir\s*=\s*(['\"]).*?\1", "outdir = " + scratch, text)
    if not n:
        text = re.sub(r"(?i)&control", "&control\n  outdir = " + scratch + ",", text, count=1)
    text = re.sub(r"(?i)\bwfcdir\s*=\s*(['\"]).*?\1", "wfcdir = " + scratch, text)

    def pseudo(m):  # a relative pseudo_dir is relative to the package root
        d = m.group(2)
        return f"pseudo_dir = '{d if d.startswith('/') else str(sub / d)}'"
    text = re.sub(r"(?i)\bpseudo_dir\s*=\s*(['\"])(.*?)\1", pseudo, text)
    rerun_in = work / "rerun.in"
    rerun_in.write_text(text)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OMPI_MCA_ess_singleton_isolated": "1",
           "ESPRESSO_TMPDIR": str(work / "out")}
    done = subprocess.run(["pw.x", "-input", str(rerun_in)], cwd=work, capture_output=True, text=True,
                          timeout=timeout, env=env)
    return done.stdout


def eos_points(evidence: Path, tolerance_ry: float = 1e-6, timeout_per_run: float = 50.0) -> dict:
    sub = evidence / "submission"
    results = sub / "results"
    rows = _rows(results)
    if len(rows) < 2:
        return {"score": 0.0, "rationale": f"ev.csv has {len(rows)} rows"}
    order = sorted(range(len(rows)), key=lambda i: rows[i][1])
    others = order[1:]
    digest = int(hashlib.sha256((results / "ev.csv").read_bytes()).hexdigest(), 16)
    picked = [order[0], others[digest % len(others)]]
    work = Path("/tmp/recompute-si")
    work.mkdir(parents=True, exist_ok=True)
    notes, ok = [], True
    for i in picked:
        alat, energy = rows[i]
        out = _output_of(results, alat, energy)
        if out is None:
            return {"score": 0.0, "rationale": f"ev.csv row a = {alat}: no pw.x output with that lattice constant "
                                               f"and energy {energy}"}
        inp = out.with_suffix(".in")
        if not inp.is_file():
            return {"score": 0.0, "rationale": f"{out.name}: its input {inp.name} is not in results/scf/"}
        new = _parse(_rerun(inp, sub, work, timeout_per_run))
        old = _parse(out.read_text(errors="replace"))
        if new["energy"] is None:
            return {"score": 0.0, "rationale": f"pw.x on the submitted {inp.name} gave no total energy"}
        same = all(new[k] == old[k] for k in ("alat", "ecut", "nk", "xc"))
        de = abs(new["energy"] - energy)
        good = same and de <= tolerance_ry
        ok &= good
        notes.append(f"{inp.name} (a = {alat} bohr): recomputed {new['energy']:.8f} Ry vs submitted {energy:.8f} Ry "
                     f"(|dE| = {de:.1e})" + ("" if same else
                                              f"; settings differ: recomputed "
                                              f"{[new[k] for k in ('alat', 'ecut', 'nk', 'xc')]}"
                                              f", submitted {[old[k] for k in ('alat', 'ecut', 'nk', 'xc')]}"))
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + "; ".join(notes),
            "refs": ["submission/results/ev.csv", "submission/results/scf/"]}
