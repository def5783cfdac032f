"""Secret inputs of rf-lowpass-filter (PRIVATE): cutoff, impedance, specification, ripple and sweep of the
second replay. The specification is drawn so that the smallest maximally flat order N is odd (3, 5 or 7:
the equal-ripple prototype then has a matched load), with the loss between the orders N-1 and N; the
sweep is 1200 points from fc/400 to 3 fc (step fc/400, fc on the grid). Continuous values with 2-3
decimals: no table or cache can hold the answers."""

import math


def _il(n, ratio):
    return 10 * math.log10(1 + ratio ** (2 * n))


def draw(rng):
    n = rng.choice([3, 5, 7])
    fc = round(rng.uniform(0.5, 5.0), 3) * 1e9
    while True:
        spec_f = round(fc * rng.uniform(1.3, 2.0), -6)
        ratio = spec_f / fc
        lo, hi = _il(n - 1, ratio), _il(n, ratio)
        il = round(rng.uniform(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo)), 2)
        if lo < il <= hi:
            break
    return {
        "fc_Hz": fc,
        "Z0_ohm": round(rng.uniform(25.0, 100.0), 1),
        "spec_f_Hz": spec_f,
        "spec_IL_dB": il,
        "ripple_dB": round(rng.uniform(0.1, 3.0), 2),
        "sweep": {"start_Hz": fc / 400, "stop_Hz": 3 * fc, "points": 1200},
    }
