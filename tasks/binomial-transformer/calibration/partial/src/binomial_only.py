import csv
import json
import math
import os

import numpy as np
import skrf

print("scikit-rf", skrf.__version__)
os.makedirs("results", exist_ok=True)
z0, zl, f0, c = 100.0, 50.0, 1e9, 299792458.0
z = [z0]
for n in range(3):
    z.append(z[-1] * math.exp(2 ** -3 * math.comb(3, n) * math.log(zl / z0)))
freq = skrf.Frequency(0, 2, 201, "GHz")
gamma = 1j * freq.w / c
net = None
for zn in z[1:]:
    seg = skrf.media.DefinedGammaZ0(freq, z0_port=z0, z0=zn, gamma=gamma).line(c / f0 / 4, unit="m")
    net = seg if net is None else net ** seg
net = net ** skrf.media.DefinedGammaZ0(freq, z0_port=z0, z0=z0, gamma=gamma).load((zl - z0) / (zl + z0))
net.write_touchstone("results/binomial")
g = np.abs(net.s[:, 0, 0])
ok = freq.f[g <= 0.05]
json.dump({"N": 3, "sections_ohm": z[1:], "bandwidth_binomial": float((ok.max() - ok.min()) / f0)},
          open("results/design.json", "w"))
with open("results/reflection.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["f_GHz", "gamma_binomial"])
    w.writerows(zip(freq.f / 1e9, g, strict=True))
