"""Secret inputs for si-eos-qe (PRIVATE): the lattice constants of the second replay.

8 or 9 lattice constants around a centre drawn in 10.16-10.26 bohr (the LDA minimum is ~10.21), spaced
0.095-0.125 bohr with +-0.01 bohr of jitter each, written with 4 decimals (so about 8e4 centres x 3e2 steps
x 2e2 jitter per point: no cache holds the answers), and the convergence studies' lattice constant in
10.10-10.30 bohr. Every draw spans >= +-3 % around its centre, so its minimum is interior with >= 2 % each
side, as the instruction's published grid does. The second replay costs what the first does (~30 s).
"""

from __future__ import annotations


def draw(rng) -> dict:
    n = rng.choice([8, 9])
    centre = rng.uniform(10.16, 10.26)
    step = rng.uniform(0.095, 0.125)
    alats = [round(centre + (i - (n - 1) / 2) * step + rng.uniform(-0.01, 0.01), 4) for i in range(n)]
    return {"alat_bohr": alats, "convergence_alat_bohr": round(rng.uniform(10.10, 10.30), 4)}
