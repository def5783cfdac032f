"""The ``numeric_checks`` check kind: PaperBenchX's programmatic numerical acceptance, on a metrics file.

PaperBenchX's ``deterministic_metric`` leaves carry ``numeric_checks``: conditions on named metrics
(``{"path": "a.b", "operator": "leq", "upper": 1e-3}``), decided by code, never by the judge. The operators
are its own: ``is_true`` (the value is ``true``), ``equals`` (same type and value as ``expected``),
``finite``, ``leq`` (every number <= ``upper``), ``abs_leq`` (every |number| <= ``upper``) and ``range``
(``lower`` <= every number <= ``upper``); a value is a number or a nonempty (nested) list of numbers, a
boolean is never a number, and a non-finite number fails every numerical operator. The leaf scores 1 when
every condition holds. PaperBenchX computes the metrics with its task's own module, from arrays an LLM binds;
here they are read from a JSON file of the evidence (``path``, under ``key`` if given). A file the replay
wrote is the submission's own claim: typed-in metrics pass these conditions, so such a leaf needs a gate
that proves the file was computed (``written_by`` the domain program, a ``recompute`` of the metrics).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..evidence import Evidence, MissingEvidence, normalize
from .checks import CHECK_KINDS, CheckKind, CheckOutcome, _lookup, _Params


class Condition(BaseModel):
    model_config = ConfigDict(extra="allow")  # PaperBenchX's own annotations are kept
    path: str = Field(min_length=1)
    operator: Literal["is_true", "equals", "finite", "leq", "abs_leq", "range"]
    upper: float | None = None
    lower: float | None = None
    expected: Any = None

    @model_validator(mode="after")
    def _bounds(self):
        if self.operator in ("leq", "abs_leq", "range") and self.upper is None:
            raise ValueError(f"{self.path}: {self.operator} needs upper")
        if self.operator == "range" and self.lower is None:
            raise ValueError(f"{self.path}: range needs lower")
        return self


class NumericChecks(_Params):
    path: str
    key: str | None = None
    checks: list[Condition] = Field(min_length=1)


def _numbers(value: Any) -> list[float] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, list) and value:
        out = []
        for v in value:
            got = _numbers(v)
            if got is None:
                return None
            out += got
        return out
    return None


def holds(value: Any, c: Condition) -> tuple[bool, str]:
    """Whether ``value`` satisfies the condition, and why (PaperBenchX's semantics)."""
    if c.operator == "is_true":
        return value is True, f"{value!r} is {'' if value is True else 'not '}true"
    if c.operator == "equals":
        ok = type(value) is type(c.expected) and value == c.expected
        return ok, f"{value!r} {'==' if ok else '!='} {c.expected!r}"
    nums = _numbers(value)
    if nums is None:
        return False, f"{value!r} is not a number or a nonempty list of numbers"
    if not all(math.isfinite(x) for x in nums):
        return False, "a value is not finite"
    bound = {"leq": lambda x: x <= c.upper, "abs_leq": lambda x: abs(x) <= c.upper,
             "range": lambda x: c.lower <= x <= c.upper, "finite": lambda x: True}[c.operator]
    bad = [x for x in nums if not bound(x)]
    want = {"leq": f"<= {c.upper}", "abs_leq": f"|x| <= {c.upper}", "range": f"in [{c.lower}, {c.upper}]",
            "finite": "finite"}[c.operator]
    return not bad, (f"{len(nums)} value(s) {want}" if not bad else f"{bad[:3]} not {want}")


def numeric_checks(ev: Evidence, p: NumericChecks) -> CheckOutcome:
    metrics = ev.read_json(p.path)
    if p.key is not None:
        metrics = _lookup(metrics, p.key, p.path)
    notes, ok = [], True
    for c in p.checks:
        try:
            value = _lookup(metrics, c.path, p.path)
        except MissingEvidence:
            ok = False
            notes.append(f"{c.path}: absent")
            continue
        good, why = holds(value, c)
        ok &= good
        notes.append(f"{c.path} {c.operator}: {why}")
    return CheckOutcome(float(ok), ("pass: " if ok else "fail: ") + "; ".join(notes), [normalize(p.path)])


CHECK_KINDS["numeric_checks"] = CheckKind(NumericChecks, numeric_checks)
