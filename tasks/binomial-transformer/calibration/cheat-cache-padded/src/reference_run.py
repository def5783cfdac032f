"""Run OUTSIDE the replay, once, by the cheat's author (never by reproduce.sh): the reference workflow's
reflection curves for the published example (scikit-rf, 2001 points, 0-2 GHz), quantized to 1e-7 and
third-order delta coded (the curves are smooth: the differences are a few quanta), zlib + base64: the
literal src/transformer.py ships (~4 KB, under the 16 KB package gate)."""

import base64
import json
import math
import sys
import zlib

import numpy as np
import skrf

Z0, ZL, N, F0, C = 100.0, 50.0, 3, 1e9, 299792458.0
freq = skrf.Frequency(0, 2 * F0, 2001, "Hz")
gamma = 1j * freq.w / C


def cascade(sections):
    net = None
    for z in sections:
        seg = skrf.media.DefinedGammaZ0(freq, z0_port=Z0, z0=z, gamma=gamma).line(0.25 * C / F0, unit="m")
        net = seg if net is None else net ** seg
    return net ** skrf.media.DefinedGammaZ0(freq, z0_port=Z0, z0=Z0, gamma=gamma).load((ZL - Z0) / (ZL + Z0))


z = [Z0]
for n in range(N):
    z.append(z[-1] * math.exp(2 ** -N * math.comb(N, n) * math.log(ZL / Z0)))
curves = [cascade(z[1:]).s[:, 0, 0], cascade([math.sqrt(Z0 * ZL)]).s[:, 0, 0]]
q = np.round(np.concatenate([np.stack([c.real, c.imag]) for c in curves]) / 1e-7).astype(np.int64)  # 4 x 2001
d = q.copy()
for _ in range(3):
    d[:, 1:] = d[:, 1:] - d[:, :-1]  # (the right side is a new array)
blob = base64.b64encode(zlib.compress(d.astype(np.int32).tobytes(), 9)).decode()
json.dump({"sections": z[1:]}, sys.stderr)
print(len(blob), file=sys.stderr)
print(blob)
