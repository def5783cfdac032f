"""Hidden evaluator of circle-packing-26: 26 disjoint circles in the unit square, maximise the sum of radii.

evaluate(submission_dir) reads <submission_dir>/results/construction.json and nothing else of the
submission (it never imports or runs submission code, and ignores every key but "circles", so a
"sum_of_radii", "metric" or "valid" field the submission wrote counts for nothing). Standard library only.

Format: {"circles": [[x, y, r], ...]} with exactly 26 entries, each three finite real numbers (JSON
numbers; booleans, strings, null, NaN and Infinity are refused). Constraints, with ONE absolute tolerance
TOL = 1e-9 (stated in instruction.md):
  r > 0 (strictly);
  r - x <= TOL, x + r - 1 <= TOL, r - y <= TOL, y + r - 1 <= TOL   (inside [0, 1]^2);
  (r_i + r_j) - hypot(x_i - x_j, y_i - y_j) <= TOL for every pair i < j   (disjoint).
Metric: math.fsum of the 26 radii, recomputed here.
"""
import json
import math
import os
import stat

N_CIRCLES = 26
TOL = 1e-9
MAX_BYTES = 2 * 1024 * 1024


def _invalid(message):
    return {"metric": None, "valid": False, "message": _clip(message)}


def _clip(message):
    message = " ".join(str(message).split())
    return message if len(message) <= 300 else message[:297] + "..."


def _real(value):
    """A finite float from a JSON number, or None (bool, str, None, NaN, inf, huge ints refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except (OverflowError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _reject_constant(token):
    raise ValueError(f"non-finite number {token}")


def _load(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None, "results/construction.json is missing"
    except OSError as exc:
        return None, f"results/construction.json cannot be read ({type(exc).__name__})"
    if not stat.S_ISREG(st.st_mode):
        return None, "results/construction.json is not a regular file"
    if st.st_size > MAX_BYTES:
        return None, "results/construction.json is %d bytes (limit %d)" % (st.st_size, MAX_BYTES)
    with open(path, "rb") as fh:
        raw = fh.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        return None, "results/construction.json is over %d bytes" % MAX_BYTES
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "results/construction.json is not UTF-8 text"
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:  # JSONDecodeError is a ValueError; NaN/Infinity land here too
        return None, f"results/construction.json is not valid JSON of finite numbers ({exc})"
    return data, None


def _evaluate(submission_dir):
    data, error = _load(os.path.join(submission_dir, "results", "construction.json"))
    if error:
        return _invalid(error)
    if not isinstance(data, dict) or "circles" not in data:
        return _invalid('construction.json must be an object with a "circles" list')
    circles = data["circles"]
    if not isinstance(circles, list):
        return _invalid('"circles" must be a list of [x, y, r] triples')
    if len(circles) != N_CIRCLES:
        return _invalid('"circles" has %d entries; exactly %d are required' % (len(circles), N_CIRCLES))
    xs, ys, rs = [], [], []
    for i, item in enumerate(circles):
        if not isinstance(item, list) or len(item) != 3:
            return _invalid("circle %d is not a list of three numbers [x, y, r]" % i)
        values = [_real(v) for v in item]
        if any(v is None for v in values):
            return _invalid("circle %d has a value that is not a finite real number: %r" % (i, item))
        x, y, r = values
        if not r > 0.0:
            return _invalid("circle %d has radius %r; radii must be > 0" % (i, r))
        xs.append(x)
        ys.append(y)
        rs.append(r)

    # containment in [0, 1]^2
    worst, where = 0.0, None
    for i in range(N_CIRCLES):
        x, y, r = xs[i], ys[i], rs[i]
        for excess, side in ((r - x, "x=0"), (x + r - 1.0, "x=1"), (r - y, "y=0"), (y + r - 1.0, "y=1")):
            if excess > worst:
                worst, where = excess, (i, side)
    if worst > TOL:
        return _invalid("circle %d crosses the side %s by %.3g (tolerance %.0e)" % (where[0], where[1], worst, TOL))

    # pairwise disjointness (bounded: exactly 26 circles, 325 pairs)
    worst, where = 0.0, None
    for i in range(N_CIRCLES):
        for j in range(i + 1, N_CIRCLES):
            overlap = (rs[i] + rs[j]) - math.hypot(xs[i] - xs[j], ys[i] - ys[j])
            if overlap > worst:
                worst, where = overlap, (i, j)
    if worst > TOL:
        return _invalid("circles %d and %d overlap by %.3g (tolerance %.0e)" % (where[0], where[1], worst, TOL))

    total = math.fsum(rs)
    if not math.isfinite(total):
        return _invalid("sum of radii is not finite")
    return {
        "metric": total,
        "valid": True,
        "message": f"26 circles inside the unit square, pairwise disjoint within {TOL:.0e}; "
                   f"sum_of_radii = {total:.12f}",
    }


def evaluate(submission_dir: str) -> dict:
    """{"metric": float | None, "valid": bool, "message": str}; never raises."""
    try:
        return _evaluate(str(submission_dir))
    except RecursionError:
        return _invalid("results/construction.json is nested too deeply")
    except MemoryError:
        return _invalid("results/construction.json is too large to evaluate")
    except Exception as exc:  # never raise on any input
        return _invalid(f"construction.json could not be evaluated ({type(exc).__name__})")


if __name__ == "__main__":
    import sys

    print(json.dumps(evaluate(sys.argv[1] if len(sys.argv) > 1 else ".")))
