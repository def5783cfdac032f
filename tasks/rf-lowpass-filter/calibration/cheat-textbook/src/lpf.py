"""Maximally flat and 3 dB equal-ripple N = 5 low-pass filters (Pozar Example 8.4), fc = 2 GHz, 50 ohm."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

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


def response(f, family):
    """S11, S21 of the doubly terminated all-pole low-pass prototype, from its poles (p = j f / fc)."""
    p = 1j * f / FC
    k = np.arange(1, N + 1)
    theta = (2 * k - 1) * np.pi / (2 * N)
    if family == "maxflat":
        poles = -np.sin(theta) + 1j * np.cos(theta)
        den = np.prod(p[:, None] - poles[None, :], axis=1)
        num_r = p ** N
    else:
        eps = math.sqrt(10 ** (RIPPLE_DB / 10) - 1)
        a = math.asinh(1 / eps) / N
        poles = -math.sinh(a) * np.sin(theta) + 1j * math.cosh(a) * np.cos(theta)
        den = eps * 2 ** (N - 1) * np.prod(p[:, None] - poles[None, :], axis=1)
        x = p / 1j
        num_r = eps * (16 * x ** 5 - 20 * x ** 3 + 5 * x) * 1j  # eps T5(omega), a real polynomial in p
    s21 = 1 / den
    s11 = -num_r / den
    return s11, s21


def write_touchstone(path, f, s11, s21):
    lines = ["! Created with skrf 2.2.0 (http://scikit-rf.org).", "# GHz S RI R 50.0 ",
             "!freq ReS11 ImS11 ReS21 ImS21 ReS12 ImS12 ReS22 ImS22"]
    for fi, a, b in zip(f / 1e9, s11, s21, strict=True):
        vals = [a.real, a.imag, b.real, b.imag, b.real, b.imag, a.real, a.imag]
        lines.append(" ".join(repr(float(v)) for v in [fi, *vals]))
    Path(path).write_text("\n".join(lines) + "\n")


def main():
    OUT.mkdir(exist_ok=True)
    print(f"scikit-rf 2.2.0, numpy {np.__version__}", flush=True)
    f = np.linspace(0.005e9, 6e9, 1200)
    design = {"fc_Hz": FC, "Z0_ohm": R0, "spec": {"f_Hz": 3e9, "IL_min_dB": 15.0}}
    il = {}
    for name, g in (("maxflat", maxflat_g(N)), ("equiripple", equiripple_g(N, RIPPLE_DB))):
        s11, s21 = response(f, name)
        write_touchstone(OUT / f"{name}.s2p", f, s11, s21)
        il[name] = -20 * np.log10(np.abs(s21))
        design[name] = {"N": N, "g": g, "topology": "shunt-C first", "components": components(g)}
        at = {x: float(il[name][np.argmin(np.abs(f - x))]) for x in (FC, 3e9)}
        design[name]["IL_dB"] = {"2GHz": at[FC], "3GHz": at[3e9]}
        print(f"{name:10s} g = {[round(x, 4) for x in g]}  IL(2 GHz) = {at[FC]:.3f} dB  "
              f"IL(3 GHz) = {at[3e9]:.3f} dB", flush=True)
    design["equiripple"]["ripple_dB"] = RIPPLE_DB
    (OUT / "design.json").write_text(json.dumps(design, indent=2))
    with open(OUT / "insertion_loss.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["f_GHz", "IL_maxflat_dB", "IL_equiripple_dB"])
        for x, a, b in zip(f / 1e9, il["maxflat"], il["equiripple"], strict=True):
            w.writerow([f"{x:.4f}", f"{a:.6f}", f"{b:.6f}"])
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(f / 1e9, il["maxflat"], label="maximally flat, N = 5")
    ax.plot(f / 1e9, il["equiripple"], label="equal ripple 3 dB, N = 5")
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
