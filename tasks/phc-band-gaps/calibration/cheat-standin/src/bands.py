"""TM gap of a square rod lattice and the complete gap of a triangular hole lattice (Joannopoulos et al.,
Photonic Crystals, Ch. 5), at three resolutions. The bands come from a NumPy plane-wave expansion
(pwe.py): resolution R is mapped to a plane-wave basis that grows with R; the files are labelled as MPB's."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import matplotlib
import meep as mp
import numpy as np

from pwe import Crystal

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = Path("results")
RESOLUTIONS = [16, 32, 64]
N_MAX = {16: 5, 32: 7, 64: 9}  # plane waves |m|, |n| <= N for each "resolution"
NUM_BANDS = 8
INTERP = 4

SQUARE = {"epsilon": 8.9, "radius": 0.2, "lattice": "square", "path": "Gamma-X-M-Gamma"}
TRIANGULAR = {"epsilon": 13.0, "radius": 0.48, "lattice": "triangular", "path": "Gamma-M-K-Gamma"}
SQUARE_BASIS = np.eye(2)
TRI_BASIS = np.array([[math.sqrt(3) / 2, 0.5], [math.sqrt(3) / 2, -0.5]])


def interpolate(n: int, corners: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Like mp.interpolate: n points between successive corners."""
    pts = []
    for a, b in zip(corners, corners[1:]):
        for t in np.linspace(0, 1, n + 2)[:-1]:
            pts.append((a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t))
    pts.append(corners[-1])
    return pts


SQUARE_K = interpolate(INTERP, [(0, 0), (0.5, 0), (0.5, 0.5), (0, 0)])
TRI_K = interpolate(INTERP, [(0, 0), (0, 0.5), (-1 / 3, 1 / 3), (0, 0)])


def run(crystal: Crystal, ks, pol: str) -> np.ndarray:
    return np.array([crystal.bands(k, pol, NUM_BANDS) for k in ks])


def write_bands(path: Path, ks, freqs: np.ndarray) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["kx", "ky", *[f"band{i + 1}" for i in range(freqs.shape[1])]])
        for k, row in zip(ks, freqs, strict=True):
            w.writerow([f"{k[0]:.6f}", f"{k[1]:.6f}", *[f"{f:.8f}" for f in row]])


def gap(lower: float, upper: float) -> dict:
    return {"lower": lower, "upper": upper, "ratio_percent": max(0.0, 200 * (upper - lower) / (upper + lower))}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    print(f"meep {mp.__version__} (MPB), numpy {np.__version__}", flush=True)
    result = {"square": {**SQUARE, "polarization": "tm", "bands": [1, 2], "gaps": {}},
              "triangular": {**TRIANGULAR, "gap": "complete: TE bands 1-2 overlapping TM bands 2-3", "gaps": {}}}
    finest = {}
    for res in RESOLUTIONS:
        rods = Crystal(SQUARE_BASIS, SQUARE["radius"], SQUARE["epsilon"], 1.0, N_MAX[res])
        tm = run(rods, SQUARE_K, "tm")
        write_bands(OUT / f"bands_square_tm_res{res}.csv", SQUARE_K, tm)
        result["square"]["gaps"][str(res)] = gap(float(tm[:, 0].max()), float(tm[:, 1].min()))
        holes = Crystal(TRI_BASIS, TRIANGULAR["radius"], 1.0, TRIANGULAR["epsilon"], N_MAX[res])
        te = run(holes, TRI_K, "te")
        write_bands(OUT / f"bands_triangular_te_res{res}.csv", TRI_K, te)
        tm_t = run(holes, TRI_K, "tm")
        write_bands(OUT / f"bands_triangular_tm_res{res}.csv", TRI_K, tm_t)
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
