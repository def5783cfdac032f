"""Hidden evaluator of the first-autocorrelation discovery task (standard library only).

Reads <submission_dir>/results/construction.json = {"a": [a_0, ..., a_{n-1}]}, 1 <= n <= 2000, the heights
of a step function f on [-1/4, 1/4] with n equal steps of width w = 1/(2n). Then f*f is piecewise linear
with knots at multiples of w, its value at the knots being w * c_k with c = the discrete self-convolution
of a (and 0 at the ends), so
    max_t (f*f)(t) / (integral f)^2 = w * max_k c_k / (w * sum a)^2 = 2n * max_k c_k / (sum a)^2,
an upper bound on C1 (metric "c1_upper_bound", minimise). Constant a gives exactly 2.

Tolerance: every value must be a finite real number (JSON number, not a boolean); values in [-1e-12, 0)
are clipped to 0, values below -1e-12 make the submission invalid; sum(a) must exceed 1e-9.
Nothing of the submission is imported or executed, and any other key of the JSON object (a "score" the
submission wrote, for instance) is ignored. evaluate() never raises.
"""
import json
import math
import operator
import os

MAX_N = 2000
MAX_BYTES = 2_000_000
NEG_TOL = 1e-12
MIN_SUM = 1e-9


class _Invalid(Exception):
    pass


def _reject_constant(name):
    raise _Invalid(f"non-finite JSON constant {name} (values must be finite real numbers)")


def _fmt(x):
    try:
        return f"{x:.6g}"
    except Exception:
        return repr(x)[:40]


def _load(submission_dir):
    path = os.path.join(str(submission_dir), "results", "construction.json")
    if not os.path.exists(path):
        raise _Invalid("results/construction.json is missing")
    if not os.path.isfile(path):
        raise _Invalid("results/construction.json is not a regular file")
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise _Invalid("results/construction.json is %d bytes (> %d allowed)" % (size, MAX_BYTES))
    with open(path, "rb") as fh:
        raw = fh.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise _Invalid("results/construction.json is larger than %d bytes" % MAX_BYTES)
    if not raw.strip():
        raise _Invalid("results/construction.json is empty")
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
    except _Invalid:
        raise
    except RecursionError:
        raise _Invalid("results/construction.json is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise _Invalid(f"results/construction.json is not valid JSON: {str(exc)[:150]}") from None
    return data


def _values(data):
    if not isinstance(data, dict):
        raise _Invalid(f"construction.json must be a JSON object {{\"a\": [...]}}, got {type(data).__name__}")
    if "a" not in data:
        raise _Invalid("construction.json has no key \"a\"")
    a = data["a"]
    if not isinstance(a, list):
        raise _Invalid(f"\"a\" must be a list of numbers, got {type(a).__name__}")
    n = len(a)
    if n < 1 or n > MAX_N:
        raise _Invalid("\"a\" has %d values; 1 <= n <= %d required" % (n, MAX_N))
    vals = []
    for i, x in enumerate(a):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise _Invalid("a[%d] is %s, not a real number" % (i, type(x).__name__))
        try:
            v = float(x)
        except (OverflowError, ValueError):
            raise _Invalid("a[%d] is an integer too large for a float" % i) from None
        if not math.isfinite(v):
            raise _Invalid("a[%d] = %s is not finite" % (i, v))
        if v < -NEG_TOL:
            raise _Invalid("a[%d] = %s is negative, below 0 by %s (> tolerance %g); f must be >= 0"
                           % (i, _fmt(v), _fmt(-v), NEG_TOL))
        vals.append(v if v > 0.0 else 0.0)
    return vals


def _metric(vals):
    n = len(vals)
    top = max(vals)
    if top <= 0.0:
        raise _Invalid(f"all values are 0: sum(a) = 0 (<= {MIN_SUM:g}), the ratio is 0/0")
    # the ratio is scale invariant: work with b = a / max(a) in [0, 1] (no overflow or underflow of products)
    b = [v / top for v in vals]
    sum_b = math.fsum(b)
    total = top * sum_b
    if not total > MIN_SUM:
        raise _Invalid(f"sum(a) = {_fmt(total)} is not > {MIN_SUM:g}")
    rb = b[::-1]
    conv_max = 0.0
    for k in range(2 * n - 1):  # direct O(n^2) self-convolution c_k = sum_i b_i b_{k-i}
        lo = max(0, k - n + 1)
        hi = min(k, n - 1)
        c = sum(map(operator.mul, b[lo:hi + 1], rb[n - 1 - k + lo:n - k + hi]))
        if c > conv_max:
            conv_max = c
    metric = 2.0 * n * conv_max / (sum_b * sum_b)
    if not math.isfinite(metric) or metric <= 0.0:
        raise _Invalid(f"metric is not a finite positive number ({metric})")
    return metric, n, total


def evaluate(submission_dir: str) -> dict:
    """{"metric": float | None, "valid": bool, "message": str}"""
    try:
        vals = _values(_load(submission_dir))
        metric, n, total = _metric(vals)
        msg = ("valid: n = %d steps, sum(a) = %s; c1_upper_bound = 2n*max(conv(a,a))/sum(a)^2 = %.10f"
               % (n, _fmt(total), metric))
        return {"metric": metric, "valid": True, "message": msg[:300]}
    except _Invalid as exc:
        return {"metric": None, "valid": False, "message": (f"invalid: {exc}")[:300]}
    except BaseException as exc:  # never raise, whatever the file holds
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return {"metric": None, "valid": False,
                "message": (f"invalid: could not evaluate ({type(exc).__name__}: {str(exc)[:150]})")[:300]}


if __name__ == "__main__":
    import sys
    print(json.dumps(evaluate(sys.argv[1] if len(sys.argv) > 1 else ".")))
