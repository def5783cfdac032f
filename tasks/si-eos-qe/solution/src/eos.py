"""Reference workflow: Si (diamond) LDA total energies with pw.x, cutoff and k-point convergence, and a
third-order Birch-Murnaghan fit of E(V) (Yin & Cohen 1982)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = Path("results")
SCF = OUT / "scf"
PSEUDO_DIR = "/usr/share/espresso/pseudo"
PSEUDO = "Si.pz-vbc.UPF"  # LDA, Perdew-Zunger
BOHR_TO_ANG = 0.529177
RY_PER_BOHR3_TO_GPA = 14710.507848
ECUT, KMESH = 30, 8
# the lattice constants are inputs of the contract (inputs.json): results are computed for whatever it holds
INPUTS = json.loads(Path("inputs.json").read_text())
ALAT_REF = float(INPUTS["convergence_alat_bohr"])
ALATS = np.array([float(a) for a in INPUTS["alat_bohr"]])

INPUT = """&control
  calculation = 'scf', prefix = '{label}', pseudo_dir = '{pseudo_dir}', outdir = '{outdir}'
/
&system
  ibrav = 2, celldm(1) = {alat}, nat = 2, ntyp = 1, ecutwfc = {ecut}
/
&electrons
  conv_thr = 1.0d-10
/
ATOMIC_SPECIES
  Si 28.0855 {pseudo}
ATOMIC_POSITIONS alat
  Si 0.00 0.00 0.00
  Si 0.25 0.25 0.25
K_POINTS automatic
  {k} {k} {k} 0 0 0
"""


def scf(label: str, alat: float, ecut: float, k: int) -> float:
    # outdir = results/scf and prefix = label: pw.x writes its XML data file results/scf/<label>.xml itself
    inp = INPUT.format(label=label, pseudo_dir=PSEUDO_DIR, outdir=SCF, alat=alat, ecut=ecut, pseudo=PSEUDO, k=k)
    (SCF / f"{label}.in").write_text(inp)
    # pw.x writes its standard output straight into the file (our copy of the descriptor is closed at once),
    # so the output kept is the one pw.x wrote
    with open(SCF / f"{label}.out", "wb") as fh:
        proc = subprocess.Popen(["pw.x", "-input", str(SCF / f"{label}.in")], stdout=fh, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    _, err = proc.communicate()
    shutil.rmtree(SCF / f"{label}.save", ignore_errors=True)  # wavefunctions and density: not needed
    if proc.returncode != 0 or not (SCF / f"{label}.xml").is_file():
        raise RuntimeError(f"pw.x failed for {label}: {err[-500:]}")
    # the total energy from pw.x's own data file (hartree there), never from a log that echoes names
    etot = ET.parse(SCF / f"{label}.xml").getroot().find("output/total_energy/etot")
    energy = 2.0 * float(etot.text)
    print(f"{label:14s} alat = {alat:.4f} bohr  ecut = {ecut:4.0f} Ry  k = {k}^3  E = {energy:.8f} Ry", flush=True)
    return energy


def birch_murnaghan(volumes: np.ndarray, energies: np.ndarray) -> dict:
    """BM3 is a cubic polynomial in x = V^(-2/3): fit it, then V0, B0 = V E''(V0) and B0'."""
    x = volumes ** (-2 / 3)
    c = np.polyfit(x, energies, 3)
    grid = np.linspace(volumes.min(), volumes.max(), 200001)
    e = np.polyval(c, grid ** (-2 / 3))
    v0 = grid[int(np.argmin(e))]

    def energy(v):
        return np.polyval(c, v ** (-2 / 3))

    h = 1e-3 * v0
    d2 = (energy(v0 + h) - 2 * energy(v0) + energy(v0 - h)) / h ** 2
    d3 = (energy(v0 + 2 * h) - 2 * energy(v0 + h) + 2 * energy(v0 - h) - energy(v0 - 2 * h)) / (2 * h ** 3)
    b0 = v0 * d2
    bprime = -1 - v0 * d3 / d2
    return {"V0_bohr3": v0, "E0_Ry": float(energy(v0)), "a0_bohr": (4 * v0) ** (1 / 3),
            "a0_angstrom": (4 * v0) ** (1 / 3) * BOHR_TO_ANG, "B0_GPa": b0 * RY_PER_BOHR3_TO_GPA,
            "Bprime": bprime, "coefficients": c.tolist()}


def write_csv(path: Path, header: list[str], rows) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def main() -> None:
    SCF.mkdir(parents=True, exist_ok=True)
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "quantum-espresso"], capture_output=True,
                             text=True).stdout
    print(f"Quantum ESPRESSO pw.x (Debian quantum-espresso {version})", flush=True)
    write_csv(OUT / "convergence_ecut.csv", ["ecutwfc_Ry", "energy_Ry"],
              [(ec, scf(f"ecut{ec}", ALAT_REF, ec, KMESH)) for ec in (16, 20, 24, 30, 36)])
    write_csv(OUT / "convergence_k.csv", ["kmesh", "energy_Ry"],
              [(k, scf(f"k{k}", ALAT_REF, ECUT, k)) for k in (4, 6, 8, 10)])
    energies = np.array([scf(f"ev{i}", a, ECUT, KMESH) for i, a in enumerate(ALATS)])
    volumes = ALATS ** 3 / 4
    write_csv(OUT / "ev.csv", ["alat_bohr", "volume_bohr3", "energy_Ry"],
              [(f"{a:.4f}", f"{v:.6f}", f"{e:.8f}") for a, v, e in zip(ALATS, volumes, energies, strict=True)])
    fit = birch_murnaghan(volumes, energies)
    result = {"eos": "Birch-Murnaghan (3rd order)", "functional": "LDA (Perdew-Zunger)", "pseudopotential": PSEUDO,
              "ecutwfc_Ry": ECUT, "kmesh": KMESH, **fit}
    (OUT / "eos.json").write_text(json.dumps(result, indent=2))
    print(f"a0 = {fit['a0_angstrom']:.4f} A, B0 = {fit['B0_GPa']:.1f} GPa, B0' = {fit['Bprime']:.2f}", flush=True)
    plot(volumes, energies, fit)


def plot(volumes, energies, fit) -> None:
    grid = np.linspace(volumes.min(), volumes.max(), 400)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(volumes, energies, "o", label="pw.x (LDA, 30 Ry, 8x8x8)")
    ax.plot(grid, np.polyval(fit["coefficients"], grid ** (-2 / 3)), "-", label="Birch-Murnaghan fit")
    ax.axvline(fit["V0_bohr3"], color="k", ls=":", lw=0.8)
    ax.set_xlabel("volume per cell (bohr$^3$)")
    ax.set_ylabel("total energy (Ry)")
    ax.set_title(f"Si: a0 = {fit['a0_angstrom']:.3f} A, B0 = {fit['B0_GPa']:.1f} GPa")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "eos.png", dpi=100)


if __name__ == "__main__":
    main()
