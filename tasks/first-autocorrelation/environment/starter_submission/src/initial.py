"""Initial construction: f constant on [-1/4, 1/4] (n = 50 equal steps of height 1).

f*f is then a triangle of height 1/2 (for integral f = 1/2), so max (f*f) / (integral f)^2 = 2 exactly:
a valid but weak upper bound on C1. Improve on it by changing the step heights (and n <= 2000).
"""
import json
import os

N = 50


def ratio(a):
    """2n * max_k sum_i a_i a_{k-i} / (sum a)^2 = max_t (f*f)(t) / (integral f)^2 for the step function."""
    n = len(a)
    conv_max = max(sum(a[i] * a[k - i] for i in range(max(0, k - n + 1), min(k, n - 1) + 1))
                   for k in range(2 * n - 1))
    return 2 * n * conv_max / sum(a) ** 2


def main():
    a = [1.0] * N
    os.makedirs("results", exist_ok=True)
    with open(os.path.join("results", "construction.json"), "w") as fh:
        json.dump({"a": a}, fh)
    print("n = %d steps, c1_upper_bound = %.6f" % (len(a), ratio(a)))


if __name__ == "__main__":
    main()
