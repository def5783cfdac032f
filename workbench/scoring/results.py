"""scores.json: the scored rubric of one trial."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

LeafStatus = Literal["scored", "missing_evidence", "gated", "pending_review", "withheld"]
# statuses whose score is final and counts toward R; pending_review and withheld do not
COUNTED = ("scored", "missing_evidence", "gated")


class LeafScore(BaseModel):
    id: str
    title: str
    phase: str
    effective_weight: float
    score: float | None
    status: LeafStatus
    method: str
    rationale: str = ""
    evidence_refs: list[str] = Field(default_factory=list)
    critical: bool = False
    error: str | None = None
    usage: dict[str, Any] | None = None  # judge tokens and cost for this leaf
    judge: dict[str, Any] | None = None  # model, fingerprint key and parts, cached, transcript path


class Scores(BaseModel):
    task: str
    trial: str
    scoring: str = "rubric"
    R: float
    coverage: float
    final: bool
    full: bool
    phases: dict[str, float]
    phase_weights: dict[str, float]
    needs_rescoring: bool = False
    replay_status: str | None = None
    leaves: list[LeafScore]
    judge_usage: dict[str, Any] = Field(default_factory=dict)
    fingerprint_changes: list[str] = Field(default_factory=list)
    fingerprint: dict[str, str | None]
    scored_at: str
    workbench_version: str
