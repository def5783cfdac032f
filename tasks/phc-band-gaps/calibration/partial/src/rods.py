import csv
import json
import os

import meep as mp
import numpy as np
from meep import mpb

mp.verbosity.mpb = 0
print("meep", mp.__version__)
cfg = json.load(open("inputs.json"))
sq, res, nb = cfg["square"], sorted(cfg["resolutions"])[1], int(cfg["num_bands"])  # one (the middle) resolution
os.makedirs("results", exist_ok=True)
ms = mpb.ModeSolver(geometry_lattice=mp.Lattice(size=mp.Vector3(1, 1)),
                    geometry=[mp.Cylinder(sq["radius"], material=mp.Medium(epsilon=sq["epsilon"]))],
                    k_points=mp.interpolate(int(cfg["interp"]),
                                            [mp.Vector3(), mp.Vector3(0.5), mp.Vector3(0.5, 0.5), mp.Vector3()]),
                    resolution=res, num_bands=nb)
ms.run_tm()
f = np.array(ms.all_freqs)
with open(f"results/bands_square_tm_res{res}.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["kx", "ky"] + [f"band{i + 1}" for i in range(nb)])
    for k, row in zip(ms.k_points, f, strict=True):
        w.writerow([k.x, k.y, *row])
lo, hi = float(f[:, 0].max()), float(f[:, 1].min())
json.dump({"square": {"epsilon": sq["epsilon"], "radius": sq["radius"],
                      "gaps": {str(res): {"lower": lo, "upper": hi, "ratio_percent": 200 * (hi - lo) / (hi + lo)}}}},
          open("results/gaps.json", "w"), indent=2)
