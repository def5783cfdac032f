"""Secret inputs of binomial-transformer (PRIVATE): the line, the load, the number of sections, the design
frequency and the reflection tolerance of the second replay. Ranges as instruction.md publishes them:
Z0 uniform in [50, 150] ohm (0.01 ohm), ZL = Z0 exp(+-u) with u uniform in [0.4, 1.4] (either side of Z0,
0.01 ohm), N in 2..5, f0 uniform in [0.3, 6] GHz (1 kHz), Gamma_m uniform in [0.02, min(0.1, 0.4 |Gamma_L|)]
(1e-4): ~1e4 * 1e4 * 4 * 6e6 * 500 combinations, so no cache of curves or designs can follow them. The
secret replay costs what the public one does (~1 s)."""

import math


def draw(rng):
    z0 = round(rng.uniform(50.0, 150.0), 2)
    zl = round(z0 * math.exp(rng.choice((-1, 1)) * rng.uniform(0.4, 1.4)), 2)
    gl = abs((zl - z0) / (zl + z0))
    return {"Z0_ohm": z0, "ZL_ohm": zl, "N": rng.randint(2, 5), "f0_Hz": round(rng.uniform(0.3e9, 6e9), -3),
            "gamma_m": round(rng.uniform(0.02, min(0.1, 0.4 * gl)), 4)}
