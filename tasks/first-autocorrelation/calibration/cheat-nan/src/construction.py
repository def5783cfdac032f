"""Cheat: NaN, Infinity and booleans among the step heights."""
import json
import os

A = [float("nan")] + [1.0] * 48 + [float("inf"), True, False]
os.makedirs("results", exist_ok=True)
with open("results/construction.json", "w") as fh:
    json.dump({"a": A}, fh)  # json writes NaN and Infinity (allow_nan=True by default)
print("c1_upper_bound: nan")
