"""3-section binomial and single-section quarter-wave transformers, 50 to 100 ohm, with scikit-rf."""

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


def main():
    OUT.mkdir(exist_ok=True)
    print(f"scikit-rf {skrf.__version__}", flush=True)
    freq = skrf.Frequency(0, 2, 2001, "GHz")
    design = json.loads(reference_run.DESIGN)
    mag = {}
    for name in ("binomial", "single"):
        s = np.frombuffer(zlib.decompress(base64.b64decode(reference_run.S[name])), dtype=np.complex128)
        net = skrf.Network(frequency=freq, s=s.reshape(-1, 1, 1), z0=design["Z0_ohm"])
        net.write_touchstone(str(OUT / name))
        mag[name] = np.abs(net.s[:, 0, 0])
    (OUT / "design.json").write_text(json.dumps(design, indent=2))
    with open(OUT / "reflection.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["f_GHz", "gamma_binomial", "gamma_single"])
        for row in zip(freq.f / 1e9, mag["binomial"], mag["single"], strict=True):
            w.writerow([f"{row[0]:.4f}", f"{row[1]:.8f}", f"{row[2]:.8f}"])
    print(f"sections {[round(z, 2) for z in design['sections_ohm']]} ohm; bandwidth: binomial "
          f"{design['bandwidth_binomial']:.3f}, single {design['bandwidth_single']:.3f}", flush=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(freq.f / 1e9, mag["binomial"], label="3-section binomial")
    ax.plot(freq.f / 1e9, mag["single"], label="single quarter-wave section")
    ax.axhline(0.05, color="r", ls="--", lw=0.8, label="Γm = 0.05")
    ax.set_xlabel("frequency (GHz), f0 = 1 GHz")
    ax.set_ylabel("|Γ| at the 100 Ω input")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "reflection.png", dpi=100)


if __name__ == "__main__":
    main()
