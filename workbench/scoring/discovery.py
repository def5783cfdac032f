"""``scoring = "discovery"`` (EurekAgent): a construction measured by a hidden evaluator against a record.

The task's ``tests/evaluator.py`` defines ``evaluate(submission_dir)`` returning ``{"metric", "valid",
"message"}``; ``tests/discovery.json`` gives the metric's direction, the best published value and the initial
code's value (:mod:`workbench.task.discovery_spec`). The evaluator runs confined in the task's environment on
the replayed submission (:func:`.evaluator.run_evaluator`), never in the workbench process, and only the
values it computes count: a metric the submission wrote next to its construction is never read.

Whose fault a failure is (:mod:`.faults`), as for ``sota``: an evaluator that cannot start or whose own code
breaks is the task's infrastructure (the leaves are withheld, never a silent 0); one that rejects, raises on or
times out on what the submission wrote is the submission's failure (invalid, with the reason).
"""

from __future__ import annotations

import math
from typing import Any

from ..task.discovery_spec import DiscoverySpec
from .sota import EvaluatorFailed


def summarize(spec: DiscoverySpec, result: dict | None, error: str | None = None, *,
              withheld: bool = False) -> dict[str, Any]:
    """The ``discovery`` block of scores.json from the evaluator's result (``None``: it rejected the
    submission, ``error`` says why; ``withheld``: it could not run)."""
    base = {"metric_name": spec.metric, "direction": spec.direction, "published": spec.published.value,
            "published_source": spec.published.source, "initial": spec.initial}
    if withheld:
        return {**base, "withheld": True, "error": error, "metric": None, "valid": None, "message": error,
                "progress": None, "beats_published": None}
    result = result or {}
    metric = result.get("metric")
    finite = isinstance(metric, float) and math.isfinite(metric)
    valid = result.get("valid") is True and finite
    message = str(result.get("message") or result.get("error") or error or "")[:300]
    if result.get("valid") is True and not finite:
        message = f"the evaluator called it valid with a metric of {metric!r}: not a finite number; {message}"
    value = metric if valid else None
    return {**base, "withheld": False, "metric": value, "valid": valid, "message": message,
            "progress": spec.progress(value),
            "beats_published": bool(valid and spec.better(value, spec.published.value))}


def discovery_checks(spec: DiscoverySpec, block: dict) -> dict:
    """Task checks ``discovery:valid`` (1 when the evaluator accepts the construction) and
    ``discovery:progress`` (the progress from the initial code to the record, 0..1); both raise when the
    evaluator could not run, so the leaves are withheld."""
    from .checks import CheckOutcome

    def _block() -> dict:
        if block.get("withheld"):
            raise EvaluatorFailed(block.get("error") or "the evaluator failed")
        return block

    def valid(ev, **_):
        b = _block()
        if not b["valid"]:
            return CheckOutcome(0.0, f"invalid: {b['message']}")
        return CheckOutcome(1.0, f"valid: {spec.metric} = {b['metric']:.10g} ({b['message']})")

    def progress(ev, **_):
        b = _block()
        if not b["valid"]:
            return CheckOutcome(0.0, f"no valid construction: {b['message']}")
        where = "beats" if b["beats_published"] else "against"
        return CheckOutcome(b["progress"], f"{spec.metric} = {b['metric']:.10g} {where} the published "
                            f"{spec.published.value:g} (initial {spec.initial:g}): progress {b['progress']:.4f}")

    return {"discovery:valid": valid, "discovery:progress": progress}
