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
# the answers, from the analysis itself (TODO(author): your questions)
answers = {"mcq1": ["A"] if value > math.pi else ["B"], "oeq1": f"{round(value * n / 4)} points fell inside."}
Path("results/answers.json").write_text(json.dumps(answers, indent=2))
