"""tests/sota.json (``scoring = "sota"``): each instance's primary metric, its direction and the paper's SOTA.

The file format lives here, beside the task's other formats; how g and its band are computed is
:mod:`workbench.scoring.sota`.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import load_json_model

Direction = Literal["higher_is_better", "lower_is_better"]

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def sign_of(direction: str) -> int:
    if direction in ("higher_is_better", "higher", "max", "+1", 1):
        return 1
    if direction in ("lower_is_better", "lower", "min", "-1", -1):
        return -1
    raise ValueError(f"direction must be higher_is_better or lower_is_better, not {direction!r}")


def parse_sota(text: str | float | int, direction: str) -> float:
    """The SOTA value in a paper's text: "95.5 ± 0.2" and "95.5 (0.2)" keep the mean, "~0.8" and
    "<0.3" the number, a range "0.81-0.85" its best end for the direction, several variants
    ("0.81 / 0.84") the best. Raises ValueError when there is no number."""
    sign = sign_of(direction)
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
    return load_json_model(path, SotaSpec)


def synthesized_rubric(spec: SotaSpec, task_id: str) -> dict:
    """For a sota task without a rubric.json: one validation leaf per instance (reproduces the SOTA)."""
    return {"id": task_id, "requirements": "Reproduce or improve on the paper's reported state of the art.",
            "sub_tasks": [{"id": f"sota-{n}", "weight": 1, "task_category": "Validation",
                           "title": f"{n}: {i.metric} reaches the SOTA band (g >= -0.05)",
                           "requirements": f"The primary metric {i.metric} of instance {n} is within 5% of the "
                                           f"paper's SOTA {i.sota} or better ({i.direction}).",
                           "check": {"kind": "task", "name": f"sota:{n}"}}
                          for n, i in spec.instances.items()]}
