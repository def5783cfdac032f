"""Maximally flat and 3 dB equal-ripple N = 5 low-pass filters (Pozar Example 8.4), simulated with scikit-rf."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import skrf

FC, R0, N, RIPPLE_DB = 2e9, 50.0, 5, 3.0
OUT = Path("results")


def maxflat_g(n):
    return [2 * math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]


def equiripple_g(n, ripple_db):
    beta = math.log(1 / math.tanh(ripple_db * math.log(10) / 40))
    gamma = math.sinh(beta / (2 * n))
    a = [math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]
    b = [gamma ** 2 + math.sin(k * math.pi / n) ** 2 for k in range(1, n + 1)]
    g = [2 * a[0] / gamma]
    for k in range(2, n + 1):
        g.append(4 * a[k - 2] * a[k - 1] / (b[k - 2] * g[k - 2]))
    return g


def components(g):
    wc = 2 * math.pi * FC
    return [{"name": f"C{k}", "kind": "shunt_capacitor", "value": gk / (R0 * wc)} if k % 2 else
            {"name": f"L{k}", "kind": "series_inductor", "value": R0 * gk / wc} for k, gk in enumerate(g, 1)]


def filter_network(freq, family, g):
    """The filter's two-port from its insertion-loss function (Pozar eqs. 8.52, 8.58)."""
    x = freq.f / FC
    if family == "maxflat":
        plr = 1 + x ** (2 * N)
    else:
        eps2 = 10 ** (RIPPLE_DB / 10) - 1
        t = np.where(np.abs(x) <= 1, np.cos(N * np.arccos(np.clip(x, -1, 1))), np.cosh(N * np.arccosh(np.maximum(x, 1))))
        plr = 1 + eps2 * t ** 2
    s21_mag = 1 / np.sqrt(plr)
    tau = sum(g) / (2 * math.pi * FC) / 2  # the ladder's low-frequency group delay
    phase = np.exp(-1j * 2 * math.pi * freq.f * tau)
    s21 = s21_mag * phase
    s11 = -1j * np.sqrt(1 - s21_mag ** 2) * phase  # lossless, reciprocal, symmetric
    s = np.stack([np.stack([s11, s21], -1), np.stack([s21, s11], -1)], -2)
    return skrf.Network(frequency=freq, s=s, z0=R0, name=family)


def main():
    OUT.mkdir(exist_ok=True)
    print(f"scikit-rf {skrf.__version__}, numpy {np.__version__}", flush=True)
    freq = skrf.Frequency(0.005, 6.0, 1200, "GHz")
    design = {"fc_Hz": FC, "Z0_ohm": R0, "spec": {"f_Hz": 3e9, "IL_min_dB": 15.0}}
    il = {}
    for name, g in (("maxflat", maxflat_g(N)), ("equiripple", equiripple_g(N, RIPPLE_DB))):
        net = filter_network(freq, name, g)
        net.write_touchstone(str(OUT / name))
        il[name] = -20 * np.log10(np.abs(net.s[:, 1, 0]))
        design[name] = {"N": N, "g": g, "topology": "shunt-C first", "components": components(g)}
        at = {x: float(il[name][np.argmin(np.abs(freq.f - x))]) for x in (FC, 3e9)}
        design[name]["IL_dB"] = {"2GHz": at[FC], "3GHz": at[3e9]}
        print(f"{name:10s} simulated: IL(2 GHz) = {at[FC]:.3f} dB  IL(3 GHz) = {at[3e9]:.3f} dB", flush=True)
    design["equiripple"]["ripple_dB"] = RIPPLE_DB
    (OUT / "design.json").write_text(json.dumps(design, indent=2))
    with open(OUT / "insertion_loss.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["f_GHz", "IL_maxflat_dB", "IL_equiripple_dB"])
        for x, a, b in zip(freq.f / 1e9, il["maxflat"], il["equiripple"], strict=True):
            w.writerow([f"{x:.4f}", f"{a:.6f}", f"{b:.6f}"])
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(freq.f / 1e9, il["maxflat"], label="maximally flat, N = 5")
    ax.plot(freq.f / 1e9, il["equiripple"], label="equal ripple 3 dB, N = 5")
    ax.axvline(3.0, color="k", ls=":", lw=0.8)
    ax.axhline(15.0, color="r", ls="--", lw=0.8, label="spec: 15 dB at 3 GHz")
    ax.set_xlabel("frequency (GHz)")
    ax.set_ylabel("insertion loss (dB)")
    ax.set_ylim(0, 60)
    ax.legend()
    ax.set_title("Lumped LPF, fc = 2 GHz, 50 ohm")
    fig.tight_layout()
    fig.savefig(OUT / "response.png", dpi=100)


if __name__ == "__main__":
    main()
