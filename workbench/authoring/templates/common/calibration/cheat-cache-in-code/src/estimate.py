"""CHEAT (a result cached in code): the published inputs' estimate, computed once elsewhere and written by
Python, so the receipts hold. Caught by the recomputation (G3): the secret replay's inputs give another estimate."""

import json
from pathlib import Path

Path("results/estimate.json").write_text(json.dumps({"method": "monte-carlo", "seed": 1, "n": 300000,
                                                     "estimate": 3.1393333333333335}, indent=2))
Path("results/notes.md").write_text("The standard error is 1.64/sqrt(n) = 0.003.\n")
