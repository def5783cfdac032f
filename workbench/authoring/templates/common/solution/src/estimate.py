"""The reference workflow (PRIVATE: the oracle agent delivers it)."""

import json
import math
from pathlib import Path


def estimate(seed: int, n: int) -> float:
    # TODO(author): the computation. The example: draw n points with random.Random(seed) (x then y), count
    # those inside the unit quarter circle, return 4 * inside / n.
    raise NotImplementedError("TODO(author): the reference computation")


inputs = json.loads(Path("inputs.json").read_text())
seed, n = int(inputs["seed"]), int(inputs["n"])
value = estimate(seed, n)
Path("results/estimate.json").write_text(json.dumps({"method": "monte-carlo", "seed": seed, "n": n,
                                                     "estimate": value}, indent=2))
error = 4 * math.sqrt(math.pi / 4 * (1 - math.pi / 4) / n)
Path("results/notes.md").write_text(f"The estimate {value:.5f} has a standard error of {error:.5f} "
                                    f"(binomial: 4 sqrt(p(1-p)/n) with p = pi/4, n = {n}).\n")
