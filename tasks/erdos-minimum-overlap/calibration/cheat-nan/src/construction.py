"""NaN cheat: the constant 1/2 with non-finite and string entries planted in it."""
import json
import os

h = [0.5] * 100
h[10] = float("nan")
h[20] = float("inf")
h[30] = float("-inf")
h[40] = "0.3"
os.makedirs("results", exist_ok=True)
with open(os.path.join("results", "construction.json"), "w") as fh:
    json.dump({"h": h}, fh)   # allow_nan=True by default: writes NaN, Infinity, -Infinity
