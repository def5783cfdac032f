"""PARTIAL: the reference with one ingredient missing (TODO(author): yours). The example computes the
estimate but answers only the multiple-choice question (the count is never worked out)."""

import json
import math
from pathlib import Path


def estimate(seed: int, n: int) -> float:
    # TODO(author): the reference computation, as in solution/src/estimate.py
    raise NotImplementedError("TODO(author): the partial computation")


inputs = json.loads(Path("inputs.json").read_text())
seed, n = int(inputs["seed"]), int(inputs["n"])
value = estimate(seed, n)
Path("results/estimate.json").write_text(json.dumps({"method": "monte-carlo", "seed": seed, "n": n,
                                                     "estimate": value}, indent=2))
Path("results/answers.json").write_text(json.dumps({"mcq1": ["A"] if value > math.pi else ["B"]}, indent=2))
