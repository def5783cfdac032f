import csv
import json
import os

import meep as mp
import numpy as np
from meep import mpb

mp.verbosity.mpb = 0
print("meep", mp.__version__)
os.makedirs("results", exist_ok=True)
ms = mpb.ModeSolver(geometry_lattice=mp.Lattice(size=mp.Vector3(1, 1)),
                    geometry=[mp.Cylinder(0.2, material=mp.Medium(epsilon=8.9))],
                    k_points=mp.interpolate(4, [mp.Vector3(), mp.Vector3(0.5), mp.Vector3(0.5, 0.5), mp.Vector3()]),
                    resolution=32, num_bands=8)
ms.run_tm()
f = np.array(ms.all_freqs)
with open("results/bands_square_tm_res32.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["kx", "ky"] + [f"band{i + 1}" for i in range(8)])
    for k, row in zip(ms.k_points, f, strict=True):
        w.writerow([k.x, k.y, *row])
lo, hi = float(f[:, 0].max()), float(f[:, 1].min())
json.dump({"square": {"epsilon": 8.9, "radius": 0.2,
                      "gaps": {"32": {"lower": lo, "upper": hi, "ratio_percent": 200 * (hi - lo) / (hi + lo)}}}},
          open("results/gaps.json", "w"), indent=2)
