"""scores.json: the scored rubric of one trial."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

LeafStatus = Literal["scored", "missing_evidence", "gated", "pending_review", "withheld",
                     "reviewed", "adjudicated", "disputed"]
# statuses whose score is final and counts toward R; pending_review, withheld and disputed do not
COUNTED = ("scored", "missing_evidence", "gated", "reviewed", "adjudicated")
# statuses that wait for a person (the review queue)
AWAITING = ("pending_review", "withheld", "disputed")


class LeafScore(BaseModel):
    id: str
    title: str
    phase: str
    effective_weight: float
    score: float | None
    status: LeafStatus
    method: str
    scale: Literal["binary", "continuous"] = "binary"
    rationale: str = ""
    evidence_refs: list[str] = Field(default_factory=list)
    critical: bool = False
    error: str | None = None
    usage: dict[str, Any] | None = None  # judge tokens and cost for this leaf
    judge: dict[str, Any] | None = None  # model, fingerprint key and parts, cached, transcript path
    # set when experts decided the leaf: the judge's or check's result it replaced, and who decided
    machine: dict[str, Any] | None = None
    review: dict[str, Any] | None = None


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
    sota: dict[str, Any] | None = None  # scoring = "sota": g, band, per-instance values (scoring.sota)
    qa: dict[str, Any] | None = None  # scoring = "qa": MCQ accuracy/P/R/F1, OEQ ratings (scoring.qa)
