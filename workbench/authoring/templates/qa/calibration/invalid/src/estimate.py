"""INVALID: a plausible wrong science (TODO(author): yours). The example draws the points on [0, 2]², so its
"quarter circle" covers a sixteenth of the square's area and the estimate is a quarter of pi."""

import json
import math
import random
from pathlib import Path

inputs = json.loads(Path("inputs.json").read_text())
seed, n = int(inputs["seed"]), int(inputs["n"])
rng = random.Random(seed)
inside = sum(1 for _ in range(n) if (2 * rng.random()) ** 2 + (2 * rng.random()) ** 2 < 1)
value = 4 * inside / n
Path("results/estimate.json").write_text(json.dumps({"method": "monte-carlo", "seed": seed, "n": n,
                                                     "estimate": value}, indent=2))
Path("results/answers.json").write_text(json.dumps({"mcq1": ["A"] if value > math.pi else ["B"],
                                                    "oeq1": f"{inside} points fell inside."}, indent=2))
