"""Unnormalized cheat: h = 0.45 everywhere, so sum(h) * 2/n = 0.9 instead of 1."""
import json
import os

N = 100
os.makedirs("results", exist_ok=True)
with open(os.path.join("results", "construction.json"), "w") as fh:
    json.dump({"h": [0.45] * N}, fh)
