import csv
import json
import math
import os

import numpy as np
import skrf

print("scikit-rf", skrf.__version__)
os.makedirs("results", exist_ok=True)
cfg = json.load(open("inputs.json"))
fc, r0 = cfg["fc_Hz"], cfg["Z0_ohm"]
wc = 2 * math.pi * fc
n = next(k for k in range(1, 30) if 10 * math.log10(1 + (cfg["spec_f_Hz"] / fc) ** (2 * k)) >= cfg["spec_IL_dB"])
g = [2 * math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]
parts = [{"name": f"C{k}" if k % 2 else f"L{k}", "kind": "shunt_capacitor" if k % 2 else "series_inductor",
          "value": gk / (r0 * wc) if k % 2 else r0 * gk / wc} for k, gk in enumerate(g, 1)]
freq = skrf.Frequency(cfg["sweep"]["start_Hz"], cfg["sweep"]["stop_Hz"], cfg["sweep"]["points"], "Hz")
media = skrf.media.DefinedGammaZ0(freq, z0=r0)
net = skrf.network.cascade_list([media.shunt_capacitor(p["value"]) if p["kind"] == "shunt_capacitor"
                                 else media.inductor(p["value"]) for p in parts])
net.write_touchstone("results/maxflat")
il = -20 * np.log10(np.abs(net.s[:, 1, 0]))
json.dump({"fc_Hz": fc, "Z0_ohm": r0, "maxflat": {"N": n, "g": g, "components": parts}},
          open("results/design.json", "w"), indent=2)
with open("results/insertion_loss.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["f_GHz", "IL_maxflat_dB"])
    w.writerows(zip(freq.f / 1e9, il, strict=True))
