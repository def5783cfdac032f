"""The initial construction (TODO(author): yours): the four corners and the middle of the bottom edge."""

import json
from pathlib import Path

points = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.0]]
Path("results/construction.json").write_text(json.dumps({"points": points}))
