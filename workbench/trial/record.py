"""trial.json: one pydantic model for a trial's record (configuration, stages, outcome).

The outcome's score fields are copied from scores.json (:func:`workbench.scoring.results.outcome_fields`)
whenever scores.json is written; scores.json is their one source.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from ..batch.matrix import AgentConfig
from ..io import atomic_write_json
from ..jupyter.notebooks import STAGES
from ..paths import TrialPaths
from ..version import __version__

UNFINISHED = ("running", "interrupted")  # re-run from scratch by a resume or a new `run`


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class StageRecord(BaseModel):
    status: Literal["queued", "running", "done", "failed"] = "queued"
    started_at: str | None = None
    seconds: float | None = None
    error: str | None = None
    notebook: str | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _queued(cls, v: Any) -> Any:
        return "queued" if v == "pending" else v  # older trial.json files name a stage not started "pending"


class TrialRecord(BaseModel):
    """trial.json: one trial's task, configuration, attempt, status, each stage's status and timing, and its
    outcome (R and the score fields, copied from scores.json)."""

    id: str
    task: str
    task_dir: str | None = None  # where the task package was read from (reviewers see its rubric)
    task_meta: dict[str, Any] = Field(default_factory=dict)  # field, domain, scoring: for analysis by field
    config: AgentConfig
    attempt: int
    engine: str
    # interrupted: Ctrl-C stopped it (re-run from scratch); running: found so on disk, its process died
    status: Literal["running", "complete", "infra_error", "interrupted"] = "running"
    started_at: str = Field(default_factory=now)
    finished_at: str | None = None
    stages: dict[str, StageRecord] = Field(default_factory=lambda: {s: StageRecord() for s in STAGES})
    fallback: dict[str, str] | None = None
    outcome: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    workbench_version: str = __version__


def read_trial(tp: TrialPaths) -> TrialRecord | None:
    """The trial's record (trial.json).

    Args:
        tp: the trial's paths.

    Returns:
        The :class:`TrialRecord`, or None when absent or unreadable (treated as never run).
    """
    try:
        return TrialRecord.model_validate_json(tp.trial_json.read_text())
    except (FileNotFoundError, ValueError):
        return None


def record_digest(tp: TrialPaths) -> str:
    """sha256 of trial.json as it is now ("" when there is none): tells a record written since from the one seen."""
    try:
        return hashlib.sha256(tp.trial_json.read_bytes()).hexdigest()
    except FileNotFoundError:
        return ""


def update_outcome(tp: TrialPaths, fields: dict[str, Any]) -> bool:
    """Copy score fields into a complete trial's outcome (atomically); False when there is none to update
    (no trial.json, or a trial still running: the pipeline writes its outcome when it finishes)."""
    rec = read_trial(tp)
    if rec is None or rec.status != "complete":
        return False
    rec.outcome.update(fields)
    atomic_write_json(tp.trial_json, rec.model_dump())
    return True
