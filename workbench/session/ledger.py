"""What a session records beside its submission, one model per file.

    session/delivery.json           Delivery: what the agent delivered, classified by the delivery probe
    session/usage.json              SessionUsage: the agent's turns, tokens, cost and time
    session/scoring/attempts.jsonl  one ScoringAttempt per line, appended by the hidden scoring service
    session/scoring/best.json       the best ScoringResult so far (written once an attempt succeeded)

The scoring service answers the agent with a ScoringResult holding only what the task's mode exposes
(``None``: not shown), and logs it with when and why it was asked. Fields a record may lack have
defaults, so the records of earlier versions still load.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import load_json_model
from ..paths import TrialPaths


class Delivery(BaseModel):
    """session/delivery.json"""

    status: Literal["absent", "starter_only", "delivered"]
    agent: str
    model: str | None = None
    agent_status: str
    message: str = ""
    network: str
    budget: dict[str, Any] = Field(default_factory=dict)
    files: int
    submission_digest: str
    starter_digest: str | None
    wall_sec: float


def read_delivery(tp: TrialPaths) -> Delivery | None:
    """The session's delivery record, or None before the session ended; a malformed one is a
    ValidationProblem naming the file and the field."""
    return load_json_model(tp.delivery, Delivery) if tp.delivery.is_file() else None


class ScoringResult(BaseModel):
    """One evaluation as the agent is told it: the replay's outcome and the mode's feedback, or an error."""

    model_config = ConfigDict(extra="forbid")
    attempt: int
    replay: str | None = None
    failure_reasons: list[str] | None = None
    R: float | None = None
    coverage: float | None = None
    phases: dict[str, float] | None = None
    sota: dict[str, Any] | None = Field(default=None, description="g, band and per instance metric, value, g, band")
    qa: dict[str, Any] | None = Field(default=None, description="mcq_accuracy, oeq_mean, oeq_pending")
    discovery: dict[str, Any] | None = Field(default=None, description="metric, valid, message")
    error: str | None = None
    evaluation_sec: float = 0.0


class ScoringAttempt(ScoringResult):
    """One line of attempts.jsonl: the result, when and why the agent asked, and the best so far."""

    at: str
    description: str = ""
    best: ScoringResult | None = None

    def answer(self) -> dict[str, Any]:
        """What the agent is sent: the result and the best attempt, without the log's own fields."""
        return {**self.model_dump(exclude_none=True, exclude={"at", "description", "best"}),
                "best": self.best.model_dump(exclude_none=True) if self.best else None}


class ServiceSummary(BaseModel):
    """The scoring service's use in one session (usage.json's ``scoring_service``)."""

    model_config = ConfigDict(extra="forbid")
    attempts: int = 0
    best: ScoringResult | None = None
    evaluation_sec: float = 0.0


class GpuLease(BaseModel):
    """One hold of the task's GPUs by a session (usage.json's ``gpu_leases``; sandbox.gpus.Lease)."""

    model_config = ConfigDict(extra="forbid")
    owner: str  # as written in the GPUs' locks while held
    gpus: list[str]  # their nodes as the sandbox saw them (/dev/nvidia0)
    acquired_at: str
    waited_sec: float  # for other holders to let go
    released_at: str | None = None
    held_sec: float | None = None
    measured: list[dict[str, Any]] = Field(default_factory=list)  # per GPU: lock owner, what NVML measured


class PersonSession(BaseModel):
    """What a person's session adds to its usage (time only: a person spends no tokens)."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = None  # who, as the configuration names them (a class's student)
    commands: int = 0  # commands typed at the prompt
    waited_sec: float = 0.0  # before the person attached (not counted against the budget)
    cast_bytes: int = 0  # size of session/terminal.cast
    cast_capped: bool = False  # the recording reached its cap and stopped


class SessionUsage(BaseModel):
    """session/usage.json"""

    model_config = ConfigDict(extra="forbid")
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    wall_sec: float | None = None  # the session's clock, paused while the scoring service evaluated
    scoring_service: ServiceSummary | None = None
    gpu_leases: list[GpuLease] | None = None  # a GPU task's session: when it held its GPUs
    output_tail: str | None = None  # a CLI agent that exited with an error: the end of its output
    person: PersonSession | None = None  # a person was the agent (agents.human): how the session went


def read_usage(tp: TrialPaths) -> SessionUsage | None:
    """The session's usage, or None before the session ended; a malformed usage.json is a
    ValidationProblem naming the file and the field."""
    return load_json_model(tp.usage, SessionUsage) if tp.usage.is_file() else None
