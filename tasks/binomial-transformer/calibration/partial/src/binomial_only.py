import csv
import json
import math
import os

import numpy as np
import skrf

print("scikit-rf", skrf.__version__)
os.makedirs("results", exist_ok=True)
inp = json.load(open("inputs.json"))
z0, zl, n, f0, gm, c = inp["Z0_ohm"], inp["ZL_ohm"], inp["N"], inp["f0_Hz"], inp["gamma_m"], 299792458.0
z = [z0]
for k in range(n):
    z.append(z[-1] * math.exp(2 ** -n * math.comb(n, k) * math.log(zl / z0)))
freq = skrf.Frequency(0, 2 * f0, 201, "Hz")
gamma = 1j * freq.w / c
net = None
for zn in z[1:]:
    seg = skrf.media.DefinedGammaZ0(freq, z0_port=z0, z0=zn, gamma=gamma).line(c / f0 / 4, unit="m")
    net = seg if net is None else net ** seg
net = net ** skrf.media.DefinedGammaZ0(freq, z0_port=z0, z0=z0, gamma=gamma).load((zl - z0) / (zl + z0))
net.write_touchstone("results/binomial")
g = np.abs(net.s[:, 0, 0])
ok = freq.f[g <= gm]
json.dump({"N": n, "Z0_ohm": z0, "ZL_ohm": zl, "f0_Hz": f0, "gamma_m": gm, "sections_ohm": z[1:],
           "bandwidth_binomial": float((ok.max() - ok.min()) / f0)}, open("results/design.json", "w"))
with open("results/reflection.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["f_GHz", "gamma_binomial"])
    w.writerows(zip(freq.f / 1e9, g, strict=True))
