"""Reference workflow: 3-section binomial and single-section quarter-wave transformers, 50 to 100 ohm,
simulated as cascaded ideal lines with scikit-rf (Pozar Example 5.6)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import skrf

OUT = Path("results")
# the task's inputs (inputs.json, part of the contract): line, load, sections, design frequency, tolerance
INPUTS = json.loads(Path("inputs.json").read_text())
Z0, ZL, N = float(INPUTS["Z0_ohm"]), float(INPUTS["ZL_ohm"]), int(INPUTS["N"])
GM, F0 = float(INPUTS["gamma_m"]), float(INPUTS["f0_Hz"])
C = 299792458.0


def binomial_sections() -> list[float]:
    z = [Z0]
    for n in range(N):
        z.append(z[-1] * math.exp(2 ** -N * math.comb(N, n) * math.log(ZL / Z0)))
    return z[1:]


def bandwidth_formula() -> float:
    a = 2 ** -N * abs((ZL - Z0) / (ZL + Z0))
    return 2 - 4 / math.pi * math.acos(0.5 * (GM / a) ** (1 / N))


def input_reflection(freq: skrf.Frequency, sections: list[float]) -> skrf.Network:
    """Quarter-wave (at F0) lines from the Z0 port towards the ZL load."""
    gamma = 1j * freq.w / C  # an ideal lossless TEM line (the default gamma of 1j per metre is not one)
    net = None
    for z in sections:
        seg = skrf.media.DefinedGammaZ0(freq, z0_port=Z0, z0=z, gamma=gamma).line(0.25 * C / F0, unit="m")
        net = seg if net is None else net ** seg
    load = skrf.media.DefinedGammaZ0(freq, z0_port=Z0, z0=Z0, gamma=gamma).load((ZL - Z0) / (ZL + Z0))
    return net ** load


def measured_bandwidth(f: np.ndarray, gamma: np.ndarray) -> float:
    """Width of the band around F0 where |gamma| <= GM, as a fraction of F0."""
    i0 = int(np.argmin(np.abs(f - F0)))
    lo, hi = i0, i0
    while lo > 0 and gamma[lo - 1] <= GM:
        lo -= 1
    while hi < len(f) - 1 and gamma[hi + 1] <= GM:
        hi += 1
    return float((f[hi] - f[lo]) / F0)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    print(f"scikit-rf {skrf.__version__}", flush=True)
    freq = skrf.Frequency(0, 2 * F0, 2001, "Hz")  # 0 to 2 f0, step f0/1000
    sections = binomial_sections()
    nets = {"binomial": input_reflection(freq, sections), "single": input_reflection(freq, [math.sqrt(Z0 * ZL)])}
    gamma = {}
    for name, net in nets.items():
        net.write_touchstone(str(OUT / name))
        gamma[name] = np.abs(net.s[:, 0, 0])
    bw = {name: measured_bandwidth(freq.f, g) for name, g in gamma.items()}
    design = {"N": N, "Z0_ohm": Z0, "ZL_ohm": ZL, "f0_Hz": F0, "gamma_m": GM, "sections_ohm": sections,
              "single_ohm": math.sqrt(Z0 * ZL),
              "design": "binomial, logarithmic approximation", "bandwidth_formula": bandwidth_formula(),
              "bandwidth_binomial": bw["binomial"], "bandwidth_single": bw["single"]}
    (OUT / "design.json").write_text(json.dumps(design, indent=2))
    with open(OUT / "reflection.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["f_GHz", "gamma_binomial", "gamma_single"])
        for row in zip(freq.f / 1e9, gamma["binomial"], gamma["single"], strict=True):
            w.writerow([f"{row[0]:.9f}", f"{row[1]:.10f}", f"{row[2]:.10f}"])
    print(f"sections {[round(z, 2) for z in sections]} ohm; bandwidth (|G| <= {GM}): binomial {bw['binomial']:.3f} "
          f"(formula {bandwidth_formula():.3f}), single {bw['single']:.3f}", flush=True)
    plot(freq.f / 1e9, gamma)


def plot(f, gamma) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(f, gamma["binomial"], label=f"{N}-section binomial")
    ax.plot(f, gamma["single"], label="single quarter-wave section")
    ax.axhline(GM, color="r", ls="--", lw=0.8, label=f"Γm = {GM:g}")
    ax.set_xlabel(f"frequency (GHz), f0 = {F0 / 1e9:g} GHz")
    ax.set_ylabel(f"|Γ| at the {Z0:g} Ω input")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "reflection.png", dpi=100)


if __name__ == "__main__":
    main()
