"""Cheat: a signed step function (found by minimising the ratio without the bound a >= 0)."""
import json
import os

A = [0.6876, 0.4057, -0.0294, 0.2435, 0.2001, 0.3538, -0.0129, 0.2358, 0.1882, 0.3868, -0.125, 0.0532, 0.3263, 0.2696, 0.4589, 0.5832, 0.1637, 0.423, 0.1584, 0.3761, 0.0393, 0.3018, -0.0238, 0.3462, -0.3182, -0.7009, 0.3998, 0.1323, 0.2784, 0.3353, 0.0704, 0.0011, 0.1633, 0.2605, 0.1661, -0.2447, 0.3564, 0.3115, 0.2491, 1.0]

n = len(A)
conv_max = max(sum(A[i] * A[k - i] for i in range(max(0, k - n + 1), min(k, n - 1) + 1)) for k in range(2 * n - 1))
os.makedirs("results", exist_ok=True)
with open("results/construction.json", "w") as fh:
    json.dump({"a": A}, fh)
print("c1_upper_bound: %.6f" % (2 * n * conv_max / sum(A) ** 2))
