"""INVALID: a plausible wrong science (TODO(author): yours). The example draws the points on [0, 2]², so its
"quarter circle" covers a sixteenth of the square's area and the estimate is a quarter of pi."""

import json
import random
from pathlib import Path

inputs = json.loads(Path("inputs.json").read_text())
seed, n = int(inputs["seed"]), int(inputs["n"])
rng = random.Random(seed)
inside = sum(1 for _ in range(n) if (2 * rng.random()) ** 2 + (2 * rng.random()) ** 2 < 1)
Path("results/estimate.json").write_text(json.dumps({"method": "monte-carlo", "seed": seed, "n": n,
                                                     "estimate": 4 * inside / n}, indent=2))
Path("results/notes.md").write_text("The estimate converges as 1/sqrt(n).\n")
