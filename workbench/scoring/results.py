"""scores.json: the scored rubric of one trial, and the outcome fields everything else derives from it.

scores.json is the one source of R: ``trial.json``'s outcome and the results index copy their score
fields from it (:func:`outcome_fields`) every time it is written, never the other way round.
"""

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
    """One leaf's result in scores.json: its score and status, how it was decided and on what evidence."""

    id: str
    title: str
    phase: str
    effective_weight: float
    weight: str | None = None  # the exact effective weight as a fraction ("3/40"); effective_weight rounds it
    score: float | None
    status: LeafStatus
    method: str
    scale: Literal["binary", "continuous"] = "binary"
    rationale: str = ""
    evidence_refs: list[str] = Field(default_factory=list)
    evidence_digest: str | None = None  # what this leaf's evidence was (reviews are bound to it)
    gate_scope: list[str] = Field(default_factory=list)  # a gate leaf: the leaves it zeroes unless it scores 1
    gated_by: list[str] = Field(default_factory=list)  # status gated: the failing gates
    error: str | None = None
    usage: dict[str, Any] | None = None  # judge tokens and cost for this leaf
    judge: dict[str, Any] | None = None  # model, fingerprint key and parts, cached, transcript path
    # set when experts or a gate changed the leaf: the judge's or check's own result, so it can be restored
    machine: dict[str, Any] | None = None
    review: dict[str, Any] | None = None  # reviewers, records applied, stale records (of other evidence)


class ScoringTime(BaseModel):
    """Where a scoring's wall time went (seconds): what scoring costs per trial, next to what the judge's
    tokens cost. Measured, so it differs run to run: never a scoring input, never part of the fingerprint,
    left out wherever two scorings are compared (like ``scored_at``)."""

    seconds: float  # the whole scoring, from reading the provenance to scores.json written
    checks_seconds: float  # deterministic checks: the confined reader, spot recomputations, a sota evaluator
    judge_seconds: float  # judged leaves: model calls, the judge's evidence tools, its records
    judge_calls: int  # model calls this scoring made (verdicts reused from judge records make none)
    other_seconds: float  # the rest: verifying the evidence, leaves awaiting review, reviews, finalising


class Scores(BaseModel):
    """scores.json, the one source of R: every leaf's result, R and its bounds, coverage, phase scores."""

    task: str
    trial: str
    scoring: str = "rubric"
    R: float
    coverage: float
    final: bool
    full: bool
    R_upper: float | None = None  # R if every leaf still pending, withheld or disputed passed
    full_upper: bool | None = None
    exact: dict[str, str] = Field(default_factory=dict)  # R, R_upper, coverage as fractions ("37/40")
    phases: dict[str, float]
    phase_weights: dict[str, float]
    needs_rescoring: bool = False
    replay_status: str | None = None
    evidence_digest: str | None = None  # the evidence manifest's digest, as the replay attested it
    stale_reviews: int = 0  # review records of other evidence (a re-run trial): shown, never applied
    leaves: list[LeafScore]
    judge_usage: dict[str, Any] = Field(default_factory=dict)
    fingerprint_changes: list[str] = Field(default_factory=list)
    fingerprint: dict[str, str | None]
    scored_at: str
    workbench_version: str
    sota: dict[str, Any] | None = None  # scoring = "sota": g, band, per-instance values (scoring.sota)
    qa: dict[str, Any] | None = None  # scoring = "qa": MCQ accuracy/P/R/F1, OEQ ratings (scoring.qa)
    discovery: dict[str, Any] | None = None  # scoring = "discovery": metric, valid, progress (scoring.discovery)
    timing: ScoringTime | None = None  # the last machine scoring's (a re-finalisation after a review keeps it)


def outcome_fields(scores: Scores) -> dict[str, Any]:
    """The score fields of trial.json's outcome, derived from scores.json (and only from it)."""
    return {"R": scores.R, "full": scores.full, "coverage": scores.coverage, "final": scores.final,
            "R_upper": scores.R_upper, "full_upper": scores.full_upper, "needs_rescoring": scores.needs_rescoring,
            "phases": scores.phases, "judge_usage": scores.judge_usage,
            "awaiting_review": sum(1 for lf in scores.leaves if lf.status in AWAITING)}


def read_scores(tp, *, required: bool = False) -> Scores | None:
    """A trial's scores.json, the one source of R (every reader of the file goes through here).

    Args:
        tp: the trial's :class:`~workbench.paths.TrialPaths`.
        required: a trial without one is a one-line error instead of None.

    Returns:
        The :class:`Scores`, or None when the trial has none yet (and ``required`` is False).

    Raises:
        ValidationProblem: a scores.json that is not valid, naming the file and the field.
        WorkbenchError: ``required`` and there is none.
    """
    from ..errors import WorkbenchError, load_json_model

    if not tp.scores.is_file():
        if required:
            raise WorkbenchError(f"{tp.scores}: missing; score the trial first (workbench score)")
        return None
    return load_json_model(tp.scores, Scores)
