"""Secret inputs of phc-band-gaps (PRIVATE): the crystals, resolutions, band count and path sampling of the
second replay. Ranges as instruction.md publishes them; continuous values with 3-4 decimals, so no cache
can hold the answers. Resolutions stay <= 48 so the secret replay costs about what the public one does."""


def draw(rng):
    res = sorted(rng.sample(range(12, 49), 3))
    return {
        "resolutions": res,
        "num_bands": rng.randint(6, 10),
        "interp": rng.randint(3, 6),
        "square": {"epsilon": round(rng.uniform(7.0, 11.0), 3), "radius": round(rng.uniform(0.15, 0.25), 4)},
        "triangular": {"epsilon": round(rng.uniform(11.0, 14.0), 3), "radius": round(rng.uniform(0.40, 0.48), 4)},
    }
