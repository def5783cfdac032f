"""tests/discovery.json (``scoring = "discovery"``): the metric a hidden evaluator measures, its direction, the
best published value and where it comes from (EurekAgent, §3).

A discovery task is metric-driven research: the public part is the problem statement, the submission
format and initial code; the private part is ``tests/evaluator.py``, whose ``evaluate(submission_dir)``
returns ``{"metric": float | None, "valid": bool, "message": str}`` for the construction a replay wrote.
This file is the spec beside it. How a score follows from it is :mod:`workbench.scoring.discovery`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import load_json_model

Direction = Literal["maximize", "minimize"]


class Published(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: float
    source: str = Field(min_length=1, description="the citation the value comes from")

    @field_validator("value")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v


class DiscoverySpec(BaseModel):
    """tests/discovery.json: the metric, its direction, the record to beat and the initial code's value."""

    model_config = ConfigDict(extra="forbid")
    metric: str = Field(min_length=1, description="the metric's name (evaluate() returns it as 'metric')")
    direction: Direction
    published: Published = Field(description="the best published value (the record a run is compared with)")
    previous: Published | None = Field(default=None, description="the record before it, for context")
    initial: float = Field(description="the initial code's metric, as the evaluator computes it")
    reference_within: float = Field(default=0.01, ge=0, lt=1, description=(
        "task validate: the reference solution must reach the published value within this relative distance"))
    tolerance: str = Field(default="", description="the evaluator's tolerance, in words, as instruction.md states it")
    timeout_sec: float = Field(default=120.0, gt=0, description="the evaluator's time limit")

    @field_validator("initial")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    @model_validator(mode="after")
    def _room(self):
        if self.better(self.initial, self.published.value) or self.initial == self.published.value:
            raise ValueError(f"initial {self.initial} must be worse than the published {self.published.value} "
                             f"({self.direction}): progress runs from the one to the other")
        return self

    @property
    def sign(self) -> int:
        return 1 if self.direction == "maximize" else -1

    def better(self, a: float, b: float) -> bool:
        """Whether metric ``a`` is strictly better than ``b`` in this direction."""
        return self.sign * (a - b) > 0

    def progress(self, value: float | None) -> float:
        """How far a metric went from the initial code's value to the published record: 0 at (or below) the
        initial code, 1 at (or beyond) the record, linear between; a missing value is 0."""
        if value is None or not math.isfinite(value):
            return 0.0
        span = self.published.value - self.initial
        return min(1.0, max(0.0, (value - self.initial) / span))

    def near_published(self, value: float | None) -> bool:
        """At or beyond the record, or within ``reference_within`` of it (relative)."""
        if value is None or not math.isfinite(value):
            return False
        record = self.published.value
        return not self.better(record, value) or abs(value - record) <= self.reference_within * abs(record)


def load_discovery(path: Path) -> DiscoverySpec:
    return load_json_model(path, DiscoverySpec)


def synthesized_rubric(spec: DiscoverySpec, task_id: str) -> dict:
    """The rubric of a discovery task: a gate on a valid construction and one continuous leaf, the progress
    from the initial code's metric to the published record (so R is that progress for a valid one)."""
    return {"id": task_id, "requirements": f"A valid construction whose {spec.metric} approaches or beats "
                                           f"{spec.published.value} ({spec.published.source}).",
            "sub_tasks": [
                {"id": "valid", "weight": 0, "gate": True, "task_category": "Execution",
                 "title": "The hidden evaluator accepts the construction",
                 "requirements": f"The replay's construction is valid under the evaluator's tolerance "
                                 f"({spec.tolerance or 'as the instruction states'}).",
                 "check": {"kind": "task", "name": "discovery:valid"}},
                {"id": "progress", "weight": 1, "task_category": "Validation",
                 "title": f"{spec.metric}: from the initial {spec.initial:g} to the record {spec.published.value:g}",
                 "requirements": f"{spec.metric} ({spec.direction}) measured by the hidden evaluator: 0 at the "
                                 f"initial code's {spec.initial:g}, 1 at the published {spec.published.value:g} or "
                                 "beyond, linear between.",
                 "check": {"kind": "task", "name": "discovery:progress"}}]}
