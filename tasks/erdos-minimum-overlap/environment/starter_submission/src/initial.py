"""Initial construction: the constant step function h = 1/2 on [0, 2] with n = 100 steps.

Its integral is 100 * 0.5 * 2/100 = 1 and, for every shift k, the overlap integral
int h(x) (1 - h(x + k)) dx = 0.25 * (2 - |k|), maximal at k = 0: the bound is 0.5.
Improve on it: the evaluator scores results/construction.json = {"h": [h_0, ..., h_{n-1}]}.
"""
import json
import os

N = 100


def main():
    h = [0.5] * N
    os.makedirs("results", exist_ok=True)
    with open(os.path.join("results", "construction.json"), "w") as fh:
        json.dump({"h": h}, fh)
    print(f"wrote results/construction.json: n = {N}, integral = {sum(h) * 2 / N}")


if __name__ == "__main__":
    main()
