"""PARTIAL: the reference with one ingredient missing (TODO(author): yours). The example: a hundredth of the
contract's samples, declared honestly, so its estimate is real but too coarse."""

import json
from pathlib import Path


def estimate(seed: int, n: int) -> float:
    # TODO(author): the reference computation, as in solution/src/estimate.py
    raise NotImplementedError("TODO(author): the partial computation")


inputs = json.loads(Path("inputs.json").read_text())
seed, n = int(inputs["seed"]), int(inputs["n"]) // 100
Path("results/estimate.json").write_text(json.dumps({"method": "monte-carlo", "seed": seed, "n": n,
                                                     "estimate": estimate(seed, n)}, indent=2))
Path("results/notes.md").write_text("A quick estimate.\n")
