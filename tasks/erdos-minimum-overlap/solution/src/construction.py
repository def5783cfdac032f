"""Reference construction for the Erdos minimum overlap problem (private).

A step function h on [0, 2] with n = 100 equal steps, found offline by sequential linear programming:
starting from a random h (0.5 + 0.3 N(0,1), clipped and re-centred to integral 1), each iteration
linearises every grid-shift correlation S_m(h) = (2/n) sum_i h_i (1 - h_{i+m}) around the current h and
solves, with scipy.optimize.linprog (HiGHS), min t s.t. S_m + grad S_m . d <= t, sum(d) = 0,
0 <= h + d <= 1, |d_i| <= r (trust region: r grows by 1.5 on an accepted step, halves on a rejected one);
about 250 iterations (4 s). The values are rounded to 12 decimals and one interior value absorbs the
rounding residual of the integral, so sum(h) * 2/n = 1 to ~1e-16 and every value is in [0, 1] exactly.
Its bound C(h) = 0.381084493 (AlphaEvolve 2025: 0.380924; Haugland 2016: 0.380927).
"""
import json
import os

H = [
    0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.615234666686, 0.904489475714, 1.0,
    0.966262238105, 0.325149385752, 0.102633018531, 0.238040237982, 0.346444708698,
    0.361809427208, 0.451308090487, 0.406793684482, 0.402040756823, 0.696180397028,
    0.614031427046, 0.707801877324, 0.768536690469, 0.438672150613, 0.585058212664,
    0.425322851418, 0.582636765794, 0.423660579484, 0.680292660251, 0.731259676044,
    0.675013124237, 0.589753791416, 0.873456020423, 1.0, 0.883869407089,
    0.489799360201, 0.545920893449, 0.8605162478, 0.742437818855, 0.756455390698,
    1.0, 1.0, 1.0, 1.0, 0.833568966246,
    0.958872621724, 0.93255632192, 1.0, 0.890560318953, 0.6495584014,
    1.0, 0.852014513773, 0.8605162478, 0.827499373761, 0.747674793941,
    0.923354096547, 0.657592745458, 0.63692467145, 0.589753791417, 0.675013124236,
    0.731259676044, 0.680292660251, 0.423660579484, 0.582636765794, 0.425322851418,
    0.585058212664, 0.438672150613, 0.768536690469, 0.707801877324, 0.614031427046,
    0.696180397028, 0.402040756823, 0.406793684482, 0.451308090487, 0.361809427208,
    0.346444708698, 0.238040237982, 0.102633018531, 0.325149385752, 0.966262238105,
    1.0, 0.904489475714, 0.615234666686, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0,
]


def main():
    n = len(H)
    assert all(0.0 <= v <= 1.0 for v in H)
    assert abs(sum(H) * 2.0 / n - 1.0) <= 1e-12
    os.makedirs("results", exist_ok=True)
    with open(os.path.join("results", "construction.json"), "w") as fh:
        json.dump({"h": H}, fh)
    print(f"wrote results/construction.json: n = {n}, integral = {sum(H) * 2.0 / n:.15f}")


if __name__ == "__main__":
    main()
