"""Cheat: heights so small that the self-convolution underflows to zero."""
import json
import os

A = [1e-200] * 50
os.makedirs("results", exist_ok=True)
with open("results/construction.json", "w") as fh:
    json.dump({"a": A}, fh)
# a naive ratio: the products underflow to 0.0, the sum does not
conv_max = max(sum(A[i] * A[k - i] for i in range(max(0, k - 49), min(k, 49) + 1)) for k in range(99))
print("c1_upper_bound: %r" % (2 * len(A) * conv_max / sum(A) / sum(A)))
