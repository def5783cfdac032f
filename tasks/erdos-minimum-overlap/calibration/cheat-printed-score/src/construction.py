"""Printed-score cheat: a claimed overlap_bound next to a 5-step constant h."""
import json
import os

os.makedirs("results", exist_ok=True)
with open(os.path.join("results", "construction.json"), "w") as fh:
    json.dump({"overlap_bound": 0.37, "h": [0.5] * 5}, fh)
