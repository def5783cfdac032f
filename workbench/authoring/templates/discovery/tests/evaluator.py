"""The hidden evaluator (PRIVATE): ``evaluate(submission_dir)`` returns ``{"metric": float | None, "valid":
bool, "message": str}`` for the construction the replay wrote. It runs confined in the task's environment,
with the replayed submission read-only as its working directory; agents reach it only through the scoring
service. Compute the metric yourself from the construction (never read a score the submission wrote), bound
the work before anything expensive, and never raise: return invalid with a one-line reason."""

import json
import math
import os

N = 5
TOLERANCE = 1e-9  # how far a point may lie outside the square (instruction.md states it)
MAX_BYTES = 1 << 20


def _min_distance(points: list[tuple[float, float]]) -> float:
    # TODO(author): the metric. The example: the smallest distance between two of the points.
    raise NotImplementedError("TODO(author): the evaluator's metric")


def _invalid(why: str) -> dict:
    return {"metric": None, "valid": False, "message": why[:300]}


def evaluate(submission_dir: str) -> dict:
    path = os.path.join(submission_dir, "results", "construction.json")
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_BYTES:
            return _invalid("results/construction.json is missing, not a file or over 1 MB")
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        return _invalid(f"results/construction.json is not JSON: {exc}")
    points = data.get("points") if isinstance(data, dict) else None
    if not isinstance(points, list) or len(points) != N:
        return _invalid(f"expected {{\"points\": [[x, y], ...]}} with {N} points")
    clean = []
    for i, p in enumerate(points):
        if not (isinstance(p, list) and len(p) == 2
                and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in p)):
            return _invalid(f"point {i} is not two finite numbers: {str(p)[:60]}")
        outside = max(-p[0], -p[1], p[0] - 1, p[1] - 1)
        if outside > TOLERANCE:
            return _invalid(f"point {i} lies {outside:.3g} outside the unit square (tolerance {TOLERANCE:g})")
        clean.append((float(p[0]), float(p[1])))
    d = _min_distance(clean)
    return {"metric": d, "valid": True, "message": f"smallest distance {d:.9f}"}
