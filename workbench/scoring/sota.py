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
import re
from fractions import Fraction
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .faults import InfrastructureFault

Direction = Literal["higher_is_better", "lower_is_better"]
Band = Literal["surpass", "match", "reproduce", "below"]
SURPASS, MATCH, REPRODUCE, FAILURE_G = Fraction(1, 10), Fraction(0), Fraction(-1, 20), Fraction(-1)
BAND_RULES = "surpass g > 0.1 · match g >= 0 · reproduce g >= -0.05 · below otherwise"

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def _sign(direction: str) -> int:
    if direction in ("higher_is_better", "higher", "max", "+1", 1):
        return 1
    if direction in ("lower_is_better", "lower", "min", "-1", -1):
        return -1
    raise ValueError(f"direction must be higher_is_better or lower_is_better, not {direction!r}")


def parse_sota(text: str | float | int, direction: str) -> float:
    """The SOTA value in a paper's text: "95.5 ± 0.2" and "95.5 (0.2)" keep the mean, "~0.8" and
    "<0.3" the number, a range "0.81-0.85" its best end for the direction, several variants
    ("0.81 / 0.84") the best. Raises ValueError when there is no number."""
    sign = _sign(direction)
    if isinstance(text, int | float) and not isinstance(text, bool):
        if not math.isfinite(text):
            raise ValueError(f"SOTA {text!r} is not finite")
        return float(text)
    s = str(text).strip().replace("−", "-").replace("–", "-").replace(",", "")
    s = re.sub(r"(±|\+/-|\+-)\s*" + _NUMBER, " ", s)          # uncertainty after ±
    s = re.sub(r"\(\s*(?:sd|std|s\.d\.)?\s*" + _NUMBER + r"\s*\)", " ", s, flags=re.I)  # "(0.2)", "(sd 0.2)"
    s = s.replace("~", " ").replace("≈", " ").replace("<", " ").replace(">", " ").replace("≤", " ").replace("≥", " ")
    s = s.replace("%", " ")
    # a range "a-b" or "a to b" (a dash between two numbers, not a sign)
    s = re.sub(r"(\d)\s*(?:-|to)\s*(\d|\.)", r"\1 \2", s)
    values = [float(v) for v in re.findall(_NUMBER, s)]
    if not values:
        raise ValueError(f"no number in SOTA text {str(text)!r}")
    return max(values) if sign > 0 else min(values)


def _exact(x: float) -> Fraction:
    return Fraction(repr(float(x)))


def improvement(value: float | None, sota: float, direction: str, normalizer: float | None = None) -> Fraction:
    """g for one instance, exactly; a missing or non-finite value is the failure floor -1. A SOTA of 0
    needs another ``normalizer`` (ValueError otherwise: g would be undefined)."""
    sign = _sign(direction)
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


# --- tests/sota.json ------------------------------------------------------------------------------

class Instance(BaseModel):
    model_config = ConfigDict(extra="forbid")
    metric: str = Field(description="the primary metric's key in run_evaluation()'s result")
    direction: Direction
    sota: str | float = Field(description="the paper's reported value, as written")
    normalizer: float | None = Field(default=None, description="divides m - m_sota instead of |m_sota|")
    method: str | None = None
    baseline: str | float | None = None

    @model_validator(mode="after")
    def _defined(self):
        value = parse_sota(self.sota, self.direction)
        if value == 0 and not self.normalizer:
            raise ValueError("the SOTA is 0, so g is undefined; declare a non-zero normalizer")
        return self

    @property
    def value(self) -> float:
        return parse_sota(self.sota, self.direction)


class SotaSpec(BaseModel):
    """tests/sota.json: each evaluation instance's primary metric and the paper's SOTA."""

    model_config = ConfigDict(extra="forbid")
    instances: dict[str, Instance] = Field(min_length=1)
    timeout_sec: float = Field(default=600.0, gt=0)


def load_spec(path: Path) -> SotaSpec:
    from ..errors import load_json_model

    return load_json_model(path, SotaSpec)


# --- the evaluator --------------------------------------------------------------------------------

NOT_FOR_THE_EVALUATOR = frozenset({"rubric.json", "checks.py", "questions.json", "judge.md", "sota.json",
                                   "validation.json", "freeze.json", "review.toml", "determinism.toml",
                                   "__pycache__"})


class EvaluatorFailed(InfrastructureFault):
    """The hidden evaluator could not start or its own code is broken: the task's fault, withheld."""


class EvaluationRejected(Exception):
    """The evaluator failed on what the submission wrote (it raised, or ran out of time): every instance
    gets the failure floor, with this reason."""


def evaluate(spec: SotaSpec, results: dict[str, dict] | None, error: str | None = None, *,
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


def synthesized_rubric(spec: SotaSpec, task_id: str) -> dict:
    """For a sota task without a rubric.json: one validation leaf per instance (reproduces the SOTA)."""
    return {"id": task_id, "requirements": "Reproduce or improve on the paper's reported state of the art.",
            "sub_tasks": [{"id": f"sota-{n}", "weight": 1, "task_category": "Validation",
                           "title": f"{n}: {i.metric} reaches the SOTA band (g >= -0.05)",
                           "requirements": f"The primary metric {i.metric} of instance {n} is within 5% of the "
                                           f"paper's SOTA {i.sota} or better ({i.direction}).",
                           "check": {"kind": "task", "name": f"sota:{n}"}}
                          for n, i in spec.instances.items()]}
