"""Si (diamond) LDA equation of state: convergence tables, a 9-point E(V) at 30 Ry / 8x8x8, a third-order
Birch-Murnaghan fit and the figure. The total energies come from a Birch-Murnaghan curve with LDA-like
parameters and exponential convergence laws; the pw.x outputs are rendered from a template."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pw_output import render  # noqa: E402

OUT = Path("results")
SCF = OUT / "scf"
PSEUDO = "Si.pz-vbc.UPF"
BOHR_TO_ANG = 0.529177
RY_PER_BOHR3_TO_GPA = 14710.507848
ECUT, KMESH = 30, 8
ALAT_REF = 10.2
ALATS = np.round(np.linspace(9.8, 10.6, 9), 4)

# "LDA" parameters of the curve
A0_ANG, B0_GPA, BP, E0 = 5.405, 95.0, 4.1, -15.852095

INPUT = """&control
  calculation = 'scf', prefix = 'si_{label}', pseudo_dir = '/usr/share/espresso/pseudo', outdir = '/tmp/qe-{label}'
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


def bm3(v: np.ndarray | float) -> np.ndarray | float:
    v0 = (A0_ANG / BOHR_TO_ANG) ** 3 / 4
    b0 = B0_GPA / RY_PER_BOHR3_TO_GPA
    eta = (v0 / v) ** (2 / 3)
    return E0 + 9 * v0 * b0 / 16 * ((eta - 1) ** 3 * BP + (eta - 1) ** 2 * (6 - 4 * eta))


def e_ref() -> float:
    return float(bm3(ALAT_REF ** 3 / 4))


def e_ecut(ec: float) -> float:
    return e_ref() + 0.171 * (np.exp(-ec / 6.4) - np.exp(-ECUT / 6.4))


def e_k(k: int) -> float:
    return e_ref() + 0.52 * (np.exp(-k / 1.1) - np.exp(-KMESH / 1.1))


def scf(label: str, alat: float, ecut: float, k: int, energy: float) -> float:
    energy = round(float(energy), 8)
    (SCF / f"{label}.in").write_text(INPUT.format(label=label, alat=alat, ecut=ecut, pseudo=PSEUDO, k=k))
    (SCF / f"{label}.out").write_text(render(label, alat, ecut, k, energy))
    print(f"{label:14s} alat = {alat:.4f} bohr  ecut = {ecut:4.0f} Ry  k = {k}^3  E = {energy:.8f} Ry", flush=True)
    return energy


def birch_murnaghan(volumes: np.ndarray, energies: np.ndarray) -> dict:
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
    return {"V0_bohr3": v0, "E0_Ry": float(energy(v0)), "a0_bohr": (4 * v0) ** (1 / 3),
            "a0_angstrom": (4 * v0) ** (1 / 3) * BOHR_TO_ANG, "B0_GPa": v0 * d2 * RY_PER_BOHR3_TO_GPA,
            "Bprime": -1 - v0 * d3 / d2, "coefficients": c.tolist()}


def write_csv(path: Path, header: list[str], rows) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def main() -> None:
    SCF.mkdir(parents=True, exist_ok=True)
    print("Quantum ESPRESSO pw.x (Debian quantum-espresso 6.7-2+b1)", flush=True)
    write_csv(OUT / "convergence_ecut.csv", ["ecutwfc_Ry", "energy_Ry"],
              [(ec, scf(f"ecut{ec}", ALAT_REF, ec, KMESH, e_ecut(ec))) for ec in (16, 20, 24, 30, 36)])
    write_csv(OUT / "convergence_k.csv", ["kmesh", "energy_Ry"],
              [(k, scf(f"k{k}", ALAT_REF, ECUT, k, e_k(k))) for k in (4, 6, 8, 10)])
    volumes = ALATS ** 3 / 4
    energies = np.array([scf(f"ev{i}", a, ECUT, KMESH, bm3(v)) for i, (a, v) in enumerate(zip(ALATS, volumes))])
    write_csv(OUT / "ev.csv", ["alat_bohr", "volume_bohr3", "energy_Ry"],
              [(f"{a:.4f}", f"{v:.6f}", f"{e:.8f}") for a, v, e in zip(ALATS, volumes, energies, strict=True)])
    fit = birch_murnaghan(volumes, energies)
    result = {"eos": "Birch-Murnaghan (3rd order)", "functional": "LDA (Perdew-Zunger)", "pseudopotential": PSEUDO,
              "ecutwfc_Ry": ECUT, "kmesh": KMESH, **fit}
    (OUT / "eos.json").write_text(json.dumps(result, indent=2))
    print(f"a0 = {fit['a0_angstrom']:.4f} A, B0 = {fit['B0_GPa']:.1f} GPa, B0' = {fit['Bprime']:.2f}", flush=True)
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
