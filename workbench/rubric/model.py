"""The rubric tree: one pydantic model for PaperBench TaskNode plus the PaperBenchX extensions.

A node is ``{id, requirements, weight, sub_tasks, task_category, ...}``. Leaves carry a phase (through
``task_category``) and optionally ``title``, ``evidence_inputs``, ``gate``, ``check`` (a deterministic
check spec), ``tolerance``, ``effective_points`` (checked against the computed weights) and ``method``.
Graded trees add ``score``, ``valid_score`` and ``explanation``. Nodes are strict: a key that is not one
of these is an error naming the file and the node's path (a ``"wieght"`` would otherwise silently change
the phase weights). The other tools' own fields (PaperBench's ``judge_metadata``, PaperBenchX's
``metric_operation``, ``critical``, ``research_block_id``, ...) are declared and kept, so their files load;
PaperBenchX's ``numeric_checks`` (a deterministic check) and ``source_qualification_ids`` (the named leaves
gate this one) change a score as its graders make them.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .phases import phase_of

Method = Literal["deterministic", "judge", "expert"]


class EvidenceInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    kind: str | None = None
    role: str | None = None
    recursive: bool = False  # a directory: the judge is shown every file below it, else its top level


class RubricNode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    requirements: str = ""
    weight: float = 1.0
    sub_tasks: list[RubricNode] = Field(default_factory=list)
    task_category: str | None = None
    finegrained_task_category: str | None = None
    title: str | None = None
    evidence_inputs: list[EvidenceInput] = Field(default_factory=list)
    gate: bool = False
    check: dict[str, Any] | None = None
    tolerance: Any = None
    effective_points: float | None = None
    method: Method | None = None
    scale: Literal["binary", "continuous"] = "binary"  # how a judge or an expert scores the leaf
    judge_notes: str | None = None  # private guidance for the judge
    # graded trees
    score: float | None = None
    valid_score: bool | None = None
    explanation: str | None = None
    # qa leaves (scoring mode qa): the atomic facts the judge labels, and the question the answer is keyed by
    facts: list[str] | None = None
    answer_key: str | None = None
    # other tools' fields, kept as they are
    judge_metadata: Any = None  # PaperBench graded trees
    metric_operation: Any = None  # PaperBenchX
    critical: bool = False  # PaperBenchX
    # PaperBenchX: how a leaf is scored (deterministic_metric, llm_binary, ...), its numerical acceptance
    # conditions (scored by the numeric_checks check kind), the leaves whose native-source review must pass
    # first, and bookkeeping kept as it is
    scoring_type: str | None = None
    numeric_checks: list[dict[str, Any]] | None = None
    source_qualification_ids: list[str] | None = None
    evidence_gates: Any = None
    research_block_id: Any = None
    weight_semantics: Any = None  # the root's
    # PaperBenchX's criterion text where ``requirements`` is absent (its graders read description, then
    # requirements, then title or name), and its hybrid check ``{"mode": "fail_only", "manual": ...}``
    description: str | None = None
    name: str | None = None
    hybrid_check: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _paperbenchx_leaf(cls, data: Any) -> Any:
        """PaperBenchX's text fields fill an empty ``requirements``; its hybrid ``check`` (no ``kind``, a
        ``mode``) is kept as ``hybrid_check`` and its ``manual`` goes to the judge's private notes, so the
        check field keeps meaning one thing: a deterministic check of ours."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if not data.get("requirements"):
            text = data.get("description") or data.get("title") or data.get("name")
            if isinstance(text, str):
                data["requirements"] = text
        check = data.get("check")
        if isinstance(check, dict) and "kind" not in check and "mode" in check:
            data["hybrid_check"] = data.pop("check")
            manual = check.get("manual")
            if isinstance(manual, str) and manual.strip():
                data["judge_notes"] = "\n".join(x for x in (data.get("judge_notes"), manual) if x)
        return data

    @model_validator(mode="after")
    def _numeric_leaf(self):
        """A PaperBenchX ``deterministic_metric`` leaf is a deterministic check of its ``numeric_checks`` on the
        metrics file (``submission/results/metrics.json``, under the leaf's ``metric_operation`` when it names
        one), unless the leaf gives a check of its own."""
        if self.check is None and self.scoring_type == "deterministic_metric" and self.numeric_checks:
            op = self.metric_operation if isinstance(self.metric_operation, str) else None
            self.check = {"kind": "numeric_checks", "path": "submission/results/metrics.json",
                          **({"key": op} if op else {}), "checks": self.numeric_checks}
        return self

    @field_validator("id", mode="before")
    @classmethod
    def _id_to_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v

    @field_validator("weight", mode="before")
    @classmethod
    def _weight_default(cls, v: Any) -> Any:
        return 1.0 if v is None else v

    @field_validator("weight")
    @classmethod
    def _weight_finite(cls, v: float) -> float:
        if not math.isfinite(v) or v < 0:
            raise ValueError("weight must be a finite number >= 0")
        return v

    @property
    def is_leaf(self) -> bool:
        return not self.sub_tasks

    @property
    def phase(self) -> str | None:
        return phase_of(self.task_category)

    @property
    def label(self) -> str:
        return self.title or self.requirements[:80] or self.id

    @property
    def scoring_method(self) -> Method:
        """How this leaf is scored: declared, else deterministic when it has a check, else judge."""
        if self.method:
            return self.method
        return "deterministic" if self.check else "judge"
