"""Secret inputs for h2-pes (PRIVATE): the bond lengths of the second replay's potential curves.

9 to 11 bond lengths written with 4 decimals near the minimum: the first in 1.2700-1.3000 bohr, the last
in 1.5000-1.5300, the others uniform in between (a minimum spacing of 0.005 bohr), so every draw spans
1.30-1.50 bohr around Re = 1.40 as the published grid does; and two far points, one in 0.90-1.20 and one
in 1.70-3.00 bohr, outside the published near grid (an interpolation of cached published points misses
them). ~10^25 grids are possible: no cache of points holds the answers. A compact fitted model of the
curves (a few dozen coefficients, under gate G6's 2 KB of literals) could follow any grid: that is out of
secret inputs' reach (SECURITY.md), and the CPU gate G2 is what stands against it. The second replay
costs what the first does (~10-17 s on 2 cores).
"""

from __future__ import annotations


def draw(rng) -> dict:
    n = rng.randint(9, 11)
    while True:
        r = [round(rng.uniform(1.27, 1.30), 4), round(rng.uniform(1.50, 1.53), 4)]
        r += [round(rng.uniform(1.31, 1.49), 4) for _ in range(n - 2)]
        r.sort()
        if min(b - a for a, b in zip(r, r[1:], strict=False)) >= 0.005:
            # and two far from the minimum, beyond the published grid: a cache of the published points cannot
            # interpolate there
            far = [round(rng.uniform(0.90, 1.20), 4), round(rng.uniform(1.70, 3.00), 4)]
            return {"R_bohr": sorted(r + far)}
