"""CHEAT (answers cached in code): the published inputs' estimate and answers, computed once elsewhere and
written by Python, so the receipts hold. Caught by the recomputation (G3): the secret replay's inputs give
other answers."""

import json
from pathlib import Path

Path("results/estimate.json").write_text(json.dumps({"method": "monte-carlo", "seed": 1, "n": 300000,
                                                     "estimate": 3.1393333333333335}, indent=2))
Path("results/answers.json").write_text(json.dumps({"mcq1": ["B"], "oeq1": "235450 points fell inside."}))
