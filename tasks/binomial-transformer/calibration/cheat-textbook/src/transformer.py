"""3-section binomial and single-section quarter-wave transformers, 50 to 100 ohm (Pozar Example 5.6)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

OUT = Path("results")
Z0, ZL, N, GM, F0 = 100.0, 50.0, 3, 0.05, 1e9


def binomial_sections():
    z = [Z0]
    for n in range(N):
        z.append(z[-1] * math.exp(2 ** -N * math.comb(N, n) * math.log(ZL / Z0)))
    return z[1:]


def bandwidth(f, g):
    i0 = int(np.argmin(np.abs(f - F0)))
    lo = hi = i0
    while lo > 0 and g[lo - 1] <= GM:
        lo -= 1
    while hi < len(f) - 1 and g[hi + 1] <= GM:
        hi += 1
    return float((f[hi] - f[lo]) / F0)


def write_s1p(path, f, s):
    lines = ["! Created with skrf 2.2.0 (http://scikit-rf.org).", "# GHz S RI R 100.0 ", "!freq ReS11 ImS11", "!"]
    lines += [f"{fi!r} {v.real!r} {v.imag!r}" for fi, v in zip((f / 1e9).tolist(), s.tolist(), strict=True)]
    Path(path).write_text("\n".join(lines) + "\n")


def main():
    OUT.mkdir(exist_ok=True)
    print("scikit-rf 2.2.0", flush=True)
    f = np.linspace(0, 2e9, 2001)
    theta = np.pi / 2 * f / F0
    a = 2 ** -N * (ZL - Z0) / (ZL + Z0)
    zt = math.sqrt(Z0 * ZL)
    gamma = {"binomial": 2 ** N * a * np.exp(-1j * N * theta) * np.cos(theta) ** N,
             "single": (ZL - Z0) / (ZL + Z0 + 2j * np.tan(theta) * zt)}
    for name, s in gamma.items():
        write_s1p(OUT / f"{name}.s1p", f, s)
    mag = {k: np.abs(v) for k, v in gamma.items()}
    bw = {k: bandwidth(f, v) for k, v in mag.items()}
    sections = binomial_sections()
    design = {"N": N, "Z0_ohm": Z0, "ZL_ohm": ZL, "f0_Hz": F0, "gamma_m": GM, "sections_ohm": sections,
              "single_ohm": zt, "design": "binomial, logarithmic approximation",
              "bandwidth_formula": 2 - 4 / math.pi * math.acos(0.5 * (GM / abs(a)) ** (1 / N)),
              "bandwidth_binomial": bw["binomial"], "bandwidth_single": bw["single"]}
    (OUT / "design.json").write_text(json.dumps(design, indent=2))
    with open(OUT / "reflection.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["f_GHz", "gamma_binomial", "gamma_single"])
        for row in zip(f / 1e9, mag["binomial"], mag["single"], strict=True):
            w.writerow([f"{row[0]:.4f}", f"{row[1]:.8f}", f"{row[2]:.8f}"])
    print(f"sections {[round(z, 2) for z in sections]} ohm; bandwidth (|G| <= {GM}): binomial {bw['binomial']:.3f}, "
          f"single {bw['single']:.3f}", flush=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(f / 1e9, mag["binomial"], label="3-section binomial")
    ax.plot(f / 1e9, mag["single"], label="single quarter-wave section")
    ax.axhline(GM, color="r", ls="--", lw=0.8, label="Γm = 0.05")
    ax.set_xlabel("frequency (GHz), f0 = 1 GHz")
    ax.set_ylabel("|Γ| at the 100 Ω input")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "reflection.png", dpi=100)


if __name__ == "__main__":
    main()
