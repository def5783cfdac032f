"""3-section binomial and single-section quarter-wave transformers, 50 to 100 ohm, simulated with scikit-rf."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import skrf

OUT = Path("results")
Z0, ZL, N, GM, F0 = 100.0, 50.0, 3, 0.05, 1e9


def binomial_sections():
    z = [Z0]
    for n in range(N):
        z.append(z[-1] * math.exp(2 ** -N * math.comb(N, n) * math.log(ZL / Z0)))
    return z[1:]


def reflection(freq, sections):
    """Input reflection of the cascade of quarter-wave sections, by the theory of small reflections."""
    theta = np.pi / 2 * freq.f / F0
    zs = [Z0, *sections, ZL]
    steps = [(b - a) / (b + a) for a, b in zip(zs[:-1], zs[1:], strict=True)]
    s = sum(g * np.exp(-2j * n * theta) for n, g in enumerate(steps))
    return skrf.Network(frequency=freq, s=s.reshape(-1, 1, 1), z0=Z0)


def bandwidth(f, g):
    i0 = int(np.argmin(np.abs(f - F0)))
    lo = hi = i0
    while lo > 0 and g[lo - 1] <= GM:
        lo -= 1
    while hi < len(f) - 1 and g[hi + 1] <= GM:
        hi += 1
    return float((f[hi] - f[lo]) / F0)


def main():
    OUT.mkdir(exist_ok=True)
    print(f"scikit-rf {skrf.__version__}", flush=True)
    freq = skrf.Frequency(0, 2, 2001, "GHz")
    sections = binomial_sections()
    zt = math.sqrt(Z0 * ZL)
    nets = {"binomial": reflection(freq, sections), "single": reflection(freq, [zt])}
    mag = {}
    for name, net in nets.items():
        net.write_touchstone(str(OUT / name))
        mag[name] = np.abs(net.s[:, 0, 0])
    bw = {k: bandwidth(freq.f, v) for k, v in mag.items()}
    a = 2 ** -N * abs((ZL - Z0) / (ZL + Z0))
    design = {"N": N, "Z0_ohm": Z0, "ZL_ohm": ZL, "f0_Hz": F0, "gamma_m": GM, "sections_ohm": sections,
              "single_ohm": zt, "design": "binomial, logarithmic approximation",
              "bandwidth_formula": 2 - 4 / math.pi * math.acos(0.5 * (GM / a) ** (1 / N)),
              "bandwidth_binomial": bw["binomial"], "bandwidth_single": bw["single"]}
    (OUT / "design.json").write_text(json.dumps(design, indent=2))
    with open(OUT / "reflection.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["f_GHz", "gamma_binomial", "gamma_single"])
        for row in zip(freq.f / 1e9, mag["binomial"], mag["single"], strict=True):
            w.writerow([f"{row[0]:.4f}", f"{row[1]:.8f}", f"{row[2]:.8f}"])
    print(f"simulated: sections {[round(z, 2) for z in sections]} ohm; bandwidth (|G| <= {GM}): "
          f"binomial {bw['binomial']:.3f}, single {bw['single']:.3f}", flush=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(freq.f / 1e9, mag["binomial"], label="3-section binomial")
    ax.plot(freq.f / 1e9, mag["single"], label="single quarter-wave section")
    ax.axhline(GM, color="r", ls="--", lw=0.8, label="Γm = 0.05")
    ax.set_xlabel("frequency (GHz), f0 = 1 GHz")
    ax.set_ylabel("|Γ| at the 100 Ω input")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "reflection.png", dpi=100)


if __name__ == "__main__":
    main()
