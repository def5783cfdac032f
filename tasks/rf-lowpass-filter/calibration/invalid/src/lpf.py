"""Reference workflow: maximally flat and 3 dB equal-ripple low-pass filters (Pozar Example 8.4).

Prototype values from the closed forms of the insertion-loss method, impedance and frequency scaling
to fc = 2 GHz and 50 ohm, a shunt-C-first ladder simulated as a two-port with scikit-rf.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import skrf

# the contract's inputs (instruction.md): the verifier may replay the package with other values
INPUTS = json.loads(Path("inputs.json").read_text())
FC, R0 = float(INPUTS["fc_Hz"]), float(INPUTS["Z0_ohm"])
SPEC_F, SPEC_IL = float(INPUTS["spec_f_Hz"]), float(INPUTS["spec_IL_dB"])
RIPPLE_DB = float(INPUTS["ripple_dB"])
SWEEP = INPUTS["sweep"]
OUT = Path("results")


def maxflat_il(f: float, n: int) -> float:
    return 10 * math.log10(1 + (f / FC) ** (2 * n))


def maxflat_order() -> int:
    n = 1
    while maxflat_il(SPEC_F, n) < SPEC_IL:
        n += 1
    return n


def maxflat_g(n: int) -> list[float]:
    return [2 * math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]


def equiripple_g(n: int, ripple_db: float) -> list[float]:
    beta = math.log(1 / math.tanh(ripple_db * math.log(10) / 40))  # ln coth(Lr / 17.37)
    gamma = math.sinh(beta / (2 * n))
    a = [math.sin((2 * k - 1) * math.pi / (2 * n)) for k in range(1, n + 1)]
    b = [gamma ** 2 + math.sin(k * math.pi / n) ** 2 for k in range(1, n + 1)]
    g = [2 * a[0] / gamma]
    for k in range(2, n + 1):
        g.append(4 * a[k - 2] * a[k - 1] / (b[k - 2] * g[k - 2]))
    return g


def components(g: list[float]) -> list[dict]:
    wc = FC  # (the calibration error: frequency in Hz used as angular frequency)
    out = []
    for k, gk in enumerate(g, start=1):
        if k % 2:  # odd positions: shunt capacitors (the ladder starts with a shunt C)
            out.append({"name": f"C{k}", "kind": "shunt_capacitor", "value": gk / (R0 * wc)})
        else:
            out.append({"name": f"L{k}", "kind": "series_inductor", "value": R0 * gk / wc})
    return out


def ladder(media, parts: list[dict]) -> skrf.Network:
    nets = [media.shunt_capacitor(p["value"]) if p["kind"] == "shunt_capacitor" else media.inductor(p["value"])
            for p in parts]
    return skrf.network.cascade_list(nets)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    print(f"scikit-rf {skrf.__version__}, numpy {np.__version__}", flush=True)
    n = maxflat_order()
    print(f"maximally flat order for >= {SPEC_IL} dB at {SPEC_F / 1e9:g} GHz: N = {n} "
          f"(N-1 gives {maxflat_il(SPEC_F, n - 1):.2f} dB)", flush=True)
    freq = skrf.Frequency(float(SWEEP["start_Hz"]), float(SWEEP["stop_Hz"]), int(SWEEP["points"]), "Hz")
    media = skrf.media.DefinedGammaZ0(freq, z0=R0)
    design = {"fc_Hz": FC, "Z0_ohm": R0, "spec": {"f_Hz": SPEC_F, "IL_min_dB": SPEC_IL}}
    il = {}
    for name, g in (("maxflat", maxflat_g(n)), ("equiripple", equiripple_g(n, RIPPLE_DB))):
        parts = components(g)
        net = ladder(media, parts)
        net.name = name
        net.write_touchstone(str(OUT / name))
        il[name] = -20 * np.log10(np.abs(net.s[:, 1, 0]))
        design[name] = {"N": n, "g": g, "topology": "shunt-C first", "components": parts}
        at = {f: float(il[name][np.argmin(np.abs(freq.f - f))]) for f in (FC, SPEC_F)}
        design[name]["IL_dB"] = {"fc": at[FC], "spec_f": at[SPEC_F]}
        print(f"{name:10s} g = {[round(x, 4) for x in g]}  IL({FC / 1e9:g} GHz) = {at[FC]:.3f} dB  "
              f"IL({SPEC_F / 1e9:g} GHz) = {at[SPEC_F]:.3f} dB", flush=True)
    design["equiripple"]["ripple_dB"] = RIPPLE_DB
    (OUT / "design.json").write_text(json.dumps(design, indent=2))
    with open(OUT / "insertion_loss.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["f_GHz", "IL_maxflat_dB", "IL_equiripple_dB"])
        for f, a, b in zip(freq.f / 1e9, il["maxflat"], il["equiripple"], strict=True):
            w.writerow([f"{f:.4f}", f"{a:.6f}", f"{b:.6f}"])
    plot(freq.f / 1e9, il)


def plot(f_ghz, il) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(f_ghz, il["maxflat"], label="maximally flat")
    ax.plot(f_ghz, il["equiripple"], label=f"equal ripple {RIPPLE_DB:g} dB")
    ax.axvline(SPEC_F / 1e9, color="k", ls=":", lw=0.8)
    ax.axhline(SPEC_IL, color="r", ls="--", lw=0.8, label=f"spec: {SPEC_IL:g} dB at {SPEC_F / 1e9:g} GHz")
    ax.set_xlabel("frequency (GHz)")
    ax.set_ylabel("insertion loss (dB)")
    ax.set_ylim(0, 60)
    ax.legend()
    ax.set_title(f"Lumped LPF, fc = {FC / 1e9:g} GHz, {R0:g} ohm")
    fig.tight_layout()
    fig.savefig(OUT / "response.png", dpi=100)


if __name__ == "__main__":
    main()
