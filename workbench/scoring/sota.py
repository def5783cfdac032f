"""``scoring = "sota"`` (NatureBench): improvement over a paper's reported state of the art.

The task's hidden ``tests/evaluator.py`` defines ``run_evaluation()`` returning
``{instance: {metric: value}}``; ``tests/sota.json`` names each instance's primary metric, its
direction and the paper's SOTA text. Per instance ``g = dir * (m - m_sota) / |m_sota|`` (or over a
declared ``normalizer`` when the SOTA is 0); a missing or non-finite primary metric gives the failure
floor ``g = -1``; the task's g is the mean over instances. Bands: surpass ``g > 0.1``, match
``g >= 0``, reproduce ``g >= -0.05``, else below. g and its band are computed exactly on the values as
written (so m = 0.92625 against a SOTA of 0.975 is exactly -0.05: reproduce), then reported as floats.

The evaluator runs in a fresh subprocess of the task's environment (time-capped, cwd = the replayed
submission), never inside the workbench process. Whose fault a failure is (:mod:`.faults`): an evaluator
that cannot start or whose code is broken is the task's infrastructure (the instances are withheld); an
evaluator that raises or times out while reading what the submission wrote is the submission's failure
(every instance at the floor g = -1, with the reason).
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Literal

from ..paths import TaskPaths
from ..task.construction import RECORD_FILES
from ..task.sota_spec import SotaSpec, sign_of
from .faults import InfrastructureFault

Band = Literal["surpass", "match", "reproduce", "below"]
SURPASS, MATCH, REPRODUCE, FAILURE_G = Fraction(1, 10), Fraction(0), Fraction(-1, 20), Fraction(-1)
BAND_RULES = "surpass g > 0.1 · match g >= 0 · reproduce g >= -0.05 · below otherwise"

def _exact(x: float) -> Fraction:
    return Fraction(repr(float(x)))


def improvement(value: float | None, sota: float, direction: str, normalizer: float | None = None) -> Fraction:
    """g for one instance, exactly; a missing or non-finite value is the failure floor -1. A SOTA of 0
    needs another ``normalizer`` (ValueError otherwise: g would be undefined)."""
    sign = sign_of(direction)
    scale = abs(normalizer) if normalizer is not None else abs(sota)
    if scale == 0 or not math.isfinite(scale):
        raise ValueError("g is undefined for a SOTA of 0; declare a normalizer")
    try:
        m = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return FAILURE_G
    if not math.isfinite(m):
        return FAILURE_G
    return sign * (_exact(m) - _exact(sota)) / _exact(scale)


def band(g: float | Fraction) -> Band:
    g = g if isinstance(g, Fraction) else _exact(g)
    if g > SURPASS:
        return "surpass"
    if g >= MATCH:
        return "match"
    if g >= REPRODUCE:
        return "reproduce"
    return "below"


# --- the evaluator --------------------------------------------------------------------------------

_HERE = TaskPaths(Path())
NOT_FOR_THE_EVALUATOR = frozenset({p.name for p in (_HERE.rubric, _HERE.checks_py, _HERE.questions, _HERE.judge_md,
                                                    _HERE.sota, _HERE.discovery)}
                                  | {Path(f).name for f in RECORD_FILES} | {"__pycache__"})


class EvaluatorFailed(InfrastructureFault):
    """The hidden evaluator could not start or its own code is broken: the task's fault, withheld."""


class EvaluationRejected(Exception):
    """The evaluator failed on what the submission wrote (it raised, or ran out of time): every instance
    gets the failure floor, with this reason."""


def summarize_instances(spec: SotaSpec, results: dict[str, dict] | None, error: str | None = None, *,
             withheld: bool = False) -> dict:
    """The ``sota`` block of scores.json from the evaluator's results. ``withheld``: the evaluator could not
    run (no g at all); ``results`` None otherwise: it rejected the submission (every instance at -1)."""
    if withheld:
        return {"g": None, "band": None, "withheld": True, "error": error, "instances": {}, "rules": BAND_RULES}
    instances, gs = {}, []
    for name, inst in spec.instances.items():
        got = (results or {}).get(name) or {}
        value = got.get(inst.metric)
        g = improvement(value, inst.value, inst.direction, inst.normalizer)
        gs.append(g)
        why = got.get("error") or (error if results is None else None)
        instances[name] = {"metric": inst.metric, "value": value, "sota": inst.value, "direction": inst.direction,
                           "g": float(g), "band": band(g), "g_exact": str(g), **({"error": why} if why else {})}
    g = sum(gs, Fraction(0)) / len(gs)
    return {"g": float(g), "band": band(g), "g_exact": str(g), "withheld": False, "instances": instances,
            "rules": BAND_RULES, **({"error": error} if error else {})}


def instance_checks(spec: SotaSpec, block: dict) -> dict:
    """Task checks ``sota:<instance>`` (1 when the instance reproduces the SOTA, g >= -0.05) so a rubric
    can score against the hidden evaluator; they raise when the evaluator could not run (withheld)."""
    def make(name: str):
        def check(ev, **_):
            from .checks import CheckOutcome

            if block.get("withheld"):
                raise EvaluatorFailed(block.get("error") or "the evaluator failed")
            i = block["instances"][name]
            ok = i["band"] != "below"
            value = "missing" if i["value"] is None else (f"{i['value']:.6g}" if isinstance(i["value"], float)
                                                          else repr(i["value"])[:80])
            why = f" ({i['error']})" if i.get("error") else ""
            return CheckOutcome(1.0 if ok else 0.0, f"{'pass' if ok else 'fail'}: {i['metric']} = {value} vs SOTA "
                                f"{i['sota']:.6g}: g = {i['g']:+.4f} ({i['band']}){why}")
        return check
    return {f"sota:{n}": make(n) for n in spec.instances}
