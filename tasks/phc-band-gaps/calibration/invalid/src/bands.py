"""Reference workflow: TM gap of a square rod lattice and the complete gap of a triangular hole
lattice with MPB, at three resolutions (Joannopoulos et al., Photonic Crystals, Ch. 5); the crystals,
resolutions, band count and path sampling are read from inputs.json."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import matplotlib
import meep as mp
import numpy as np
from meep import mpb

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = Path("results")
# the contract's inputs (instruction.md): the verifier may replay the package with other values
INPUTS = json.loads(Path("inputs.json").read_text())
RESOLUTIONS = sorted(int(r) for r in INPUTS["resolutions"])
NUM_BANDS = int(INPUTS["num_bands"])
INTERP = int(INPUTS["interp"])
mp.verbosity.mpb = 0

SQUARE = {"epsilon": float(INPUTS["square"]["epsilon"]), "radius": float(INPUTS["square"]["radius"]),
          "lattice": "square", "path": "Gamma-X-M-Gamma"}
TRIANGULAR = {"epsilon": float(INPUTS["triangular"]["epsilon"]), "radius": float(INPUTS["triangular"]["radius"]),
              "lattice": "triangular", "path": "Gamma-M-K-Gamma"}


def square_solver(res: int) -> mpb.ModeSolver:
    corners = [mp.Vector3(), mp.Vector3(0.5), mp.Vector3(0.5, 0.5), mp.Vector3()]
    return mpb.ModeSolver(geometry_lattice=mp.Lattice(size=mp.Vector3(1, 1)),
                          geometry=[mp.Cylinder(SQUARE["radius"], material=mp.Medium(index=SQUARE["epsilon"]))],
                          k_points=mp.interpolate(INTERP, corners), resolution=res, num_bands=NUM_BANDS)


def triangular_solver(res: int) -> mpb.ModeSolver:
    lattice = mp.Lattice(size=mp.Vector3(1, 1), basis1=mp.Vector3(math.sqrt(3) / 2, 0.5),
                         basis2=mp.Vector3(math.sqrt(3) / 2, -0.5))
    corners = [mp.Vector3(), mp.Vector3(y=0.5), mp.Vector3(-1 / 3, 1 / 3), mp.Vector3()]
    return mpb.ModeSolver(geometry_lattice=lattice, geometry=[mp.Cylinder(TRIANGULAR["radius"], material=mp.air)],
                          default_material=mp.Medium(index=TRIANGULAR["epsilon"]),
                          k_points=mp.interpolate(INTERP, corners), resolution=res, num_bands=NUM_BANDS)


def run(ms: mpb.ModeSolver, pol: str) -> np.ndarray:
    ms.run_tm() if pol == "tm" else ms.run_te()
    return np.array(ms.all_freqs)


def write_bands(path: Path, ms: mpb.ModeSolver, freqs: np.ndarray) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["kx", "ky", *[f"band{i + 1}" for i in range(freqs.shape[1])]])
        for k, row in zip(ms.k_points, freqs, strict=True):
            w.writerow([f"{k.x:.6f}", f"{k.y:.6f}", *[f"{f:.8f}" for f in row]])


def gap(lower: float, upper: float) -> dict:
    return {"lower": lower, "upper": upper, "ratio_percent": max(0.0, 200 * (upper - lower) / (upper + lower))}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    print(f"meep {mp.__version__} (MPB), numpy {np.__version__}", flush=True)
    result = {"square": {**SQUARE, "polarization": "tm", "bands": [1, 2], "gaps": {}},
              "triangular": {**TRIANGULAR, "gap": "complete: TE bands 1-2 overlapping TM bands 2-3", "gaps": {}}}
    finest = {}
    for res in RESOLUTIONS:
        ms = square_solver(res)
        tm = run(ms, "tm")
        write_bands(OUT / f"bands_square_tm_res{res}.csv", ms, tm)
        result["square"]["gaps"][str(res)] = gap(float(tm[:, 0].max()), float(tm[:, 1].min()))
        ms = triangular_solver(res)
        te = run(ms, "te")
        write_bands(OUT / f"bands_triangular_te_res{res}.csv", ms, te)
        tm_t = run(ms, "tm")
        write_bands(OUT / f"bands_triangular_tm_res{res}.csv", ms, tm_t)
        lo = max(float(te[:, 0].max()), float(tm_t[:, 1].max()))
        hi = min(float(te[:, 1].min()), float(tm_t[:, 2].min()))
        result["triangular"]["gaps"][str(res)] = gap(lo, hi)
        print(f"res {res:3d}: square TM gap {result['square']['gaps'][str(res)]['ratio_percent']:.2f} %, "
              f"triangular complete gap {result['triangular']['gaps'][str(res)]['ratio_percent']:.2f} %", flush=True)
        finest = {"square": tm, "tri_te": te, "tri_tm": tm_t}
    (OUT / "gaps.json").write_text(json.dumps(result, indent=2))
    plot(finest, result)


def plot(f: dict, result: dict) -> None:
    res = str(RESOLUTIONS[-1])
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    a1.plot(f["square"], color="tab:blue")
    g = result["square"]["gaps"][res]
    a1.axhspan(g["lower"], g["upper"], color="tab:blue", alpha=0.15)
    a1.set_title(f"square rods, TM: gap {g['ratio_percent']:.1f} %")
    a2.plot(f["tri_te"], color="tab:red")
    a2.plot(f["tri_tm"], color="tab:blue", ls="--")
    g = result["triangular"]["gaps"][res]
    a2.axhspan(g["lower"], g["upper"], color="gray", alpha=0.25)
    a2.set_title(f"triangular holes, TE (red) / TM (blue): complete gap {g['ratio_percent']:.1f} %")
    n = len(f["square"])
    for ax, labels in ((a1, ["Γ", "X", "M", "Γ"]), (a2, ["Γ", "M", "K", "Γ"])):
        ax.set_xticks(np.linspace(0, n - 1, 4), labels)
        ax.set_ylabel("frequency (c/a)")
        ax.set_ylim(0, 0.8)
        ax.grid(alpha=0.3)
    fig.suptitle(f"MPB, resolution {res}")
    fig.tight_layout()
    fig.savefig(OUT / "bands.png", dpi=100)


if __name__ == "__main__":
    main()
