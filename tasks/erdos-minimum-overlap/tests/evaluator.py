"""Hidden evaluator of the Erdos minimum overlap discovery task (standard library only).

The submission is a step function h: [0, 2] -> [0, 1] with n equal steps (h_0 .. h_{n-1}, step width
2/n) and integral sum(h) * 2/n = 1, read from <submission_dir>/results/construction.json as {"h": [...]}.
Its score is the upper bound it certifies on Erdos's minimum overlap constant M:

    C(h) = sup_k  integral h(x) (1 - h(x + k)) dx,   h and 1 - h both supported on [0, 2].

For two step functions on a common grid of width d = 2/n the cross-correlation is piecewise linear in the
shift k, with knots at multiples of d: for k = m d + t (0 <= t < d) it equals (1 - t/d) S_m + (t/d) S_{m+1}
with S_m = d * sum_i h_i (1 - h_{i+m}) (only indices with 0 <= i+m < n; S_{+-n} = 0). The supremum of a
piecewise-linear function lies at a knot, so C(h) = max_m S_m over m = -(n-1) .. n-1, i.e.
max(numpy.correlate(h, 1 - h, "full")) * 2/n, computed here with a direct O(n^2) double loop (n <= 2000).

Nothing else of the submission is read; any "score" field it wrote is ignored; submission code is never
imported or executed. evaluate() never raises.
"""
import json
import math
import operator
import os

METRIC = "overlap_bound"
MIN_N = 10
MAX_N = 2000
MAX_BYTES = 2_000_000
VALUE_TOL = 1e-12      # each h_i must lie in [-1e-12, 1 + 1e-12]; then it is clipped to [0, 1]
INTEGRAL_TOL = 1e-9    # |sum(clipped h) * 2/n - 1| <= 1e-9; nothing is rescaled


def _invalid(message):
    return {"metric": None, "valid": False, "message": str(message)[:300]}


def _reject_constant(name):
    raise ValueError(f"non-finite JSON constant {name}")


def _read(submission_dir):
    path = os.path.join(submission_dir, "results", "construction.json")
    if not os.path.exists(path):
        return None, "results/construction.json is missing"
    if not os.path.isfile(path):
        return None, "results/construction.json is not a regular file"
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        return None, f"results/construction.json is {size} bytes (limit {MAX_BYTES})"
    with open(path, "rb") as fh:
        raw = fh.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        return None, f"results/construction.json exceeds {MAX_BYTES} bytes"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "results/construction.json is not UTF-8 text"
    if not text.strip():
        return None, "results/construction.json is empty"
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return None, "results/construction.json is nested too deeply"
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, over-long integer literals
        return None, f"results/construction.json is not valid JSON with finite numbers: {exc}"
    return data, None


def overlap_bound(h):
    """max over grid shifts m of (2/n) * sum_i h_i (1 - h_{i+m}); h already in [0, 1]."""
    n = len(h)
    g = [1.0 - v for v in h]
    best = 0.0
    for m in range(-(n - 1), n):
        lo = max(0, -m)
        hi = min(n, n - m)
        s = math.fsum(map(operator.mul, h[lo:hi], g[lo + m:hi + m]))
        if s > best:
            best = s
    return best * (2.0 / n)


def _evaluate(submission_dir):
    data, err = _read(submission_dir)
    if err:
        return _invalid(err)
    if not isinstance(data, dict):
        return _invalid(f"top level must be a JSON object with key 'h', got {type(data).__name__}")
    if "h" not in data:
        return _invalid("missing key 'h'")
    h_raw = data["h"]
    if not isinstance(h_raw, list):
        return _invalid(f"'h' must be a JSON array, got {type(h_raw).__name__}")
    n = len(h_raw)
    if n < MIN_N or n > MAX_N:
        return _invalid(f"'h' has {n} values; need {MIN_N} <= n <= {MAX_N}")
    h = []
    worst_i, worst_excess = -1, 0.0
    for i, v in enumerate(h_raw):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return _invalid(f"h[{i}] is not a real number ({type(v).__name__})")
        try:
            x = float(v)
        except (OverflowError, ValueError):
            return _invalid(f"h[{i}] is not a finite real number")
        if not math.isfinite(x):
            return _invalid(f"h[{i}] is not finite ({x})")
        excess = max(-x, x - 1.0)
        if excess > worst_excess:
            worst_i, worst_excess = i, excess
        h.append(x)
    if worst_excess > VALUE_TOL:
        return _invalid(f"h[{worst_i}] = {h[worst_i]!r} is outside [0, 1] by {worst_excess:.3e} "
                        f"(tolerance {VALUE_TOL:g})")
    h = [min(1.0, max(0.0, x)) for x in h]
    integral = math.fsum(h) * 2.0 / n
    if not abs(integral - 1.0) <= INTEGRAL_TOL:
        return _invalid(f"integral sum(h)*2/n = {integral:.12g} differs from 1 by {abs(integral - 1.0):.3e} "
                        f"(tolerance {INTEGRAL_TOL:g}; the evaluator rescales nothing)")
    c = overlap_bound(h)
    if not math.isfinite(c):
        return _invalid("overlap bound is not finite")
    return {"metric": c, "valid": True,
            "message": f"{METRIC} = {c:.9f} for n = {n} steps (integral {integral:.12f}, values clipped to [0, 1])"}


def evaluate(submission_dir: str) -> dict:
    """{"metric": float | None, "valid": bool, "message": str}"""
    try:
        return _evaluate(str(submission_dir))
    except BaseException as exc:  # never raise on any input (MemoryError, RecursionError, OSError, ...)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return _invalid(f"invalid submission ({type(exc).__name__})")


if __name__ == "__main__":
    import sys
    print(json.dumps(evaluate(sys.argv[1] if len(sys.argv) > 1 else ".")))
