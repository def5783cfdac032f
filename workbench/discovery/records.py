"""A discovery run's files: its state (``RUN/discovery.json``) and its ranked history (``RUN/history.json``).

Both are the controller's: they live in the run directory, which no session sees; a session is shown a
copy of the history (and earlier rounds' workspaces) read-only under /home/task/context/.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..batch.matrix import AgentConfig
from ..paths import TrialPaths
from ..session.ledger import ScoringAttempt

Phase = Literal["prepare", "propose", "implement"]
SessionStatus = Literal["pending", "running", "done", "failed"]


class Limits(BaseModel):
    """Budgets (EurekAgent §3.2): wall time per session of each phase, and cost across all sessions."""

    model_config = ConfigDict(extra="forbid")
    prepare_sec: float = Field(default=600.0, gt=0)
    propose_sec: float = Field(default=600.0, gt=0)
    implement_sec: float = Field(default=1800.0, gt=0)
    cost_usd: float | None = Field(default=None, gt=0, description="across every session; None: no limit")
    extend_sec: float = Field(default=0.0, ge=0, description=(
        "a session that runs out of time before its deliverable is continued once, from where it stopped, "
        "for this long (0: never)"))

    def for_phase(self, phase: Phase) -> float:
        return {"prepare": self.prepare_sec, "propose": self.propose_sec, "implement": self.implement_sec}[phase]


class SessionRecord(BaseModel):
    """One session of the run: where it is, how it ended, what it cost and the best it scored."""

    model_config = ConfigDict(extra="forbid")
    id: str  # "prepare", "r1-propose", "r1-i2"
    phase: Phase
    round: int = 0
    index: int = 0
    status: SessionStatus = "pending"
    hypothesis: str | None = None  # an implement session's starting direction
    agent_status: str | None = None
    wall_sec: float | None = None
    cost_usd: float | None = None
    attempts: int = 0
    best_metric: float | None = None
    extended_sec: float = 0.0  # the continuation's time granted by --extend (0: not continued)
    started_at: str | None = None  # ISO time, UTC (its latest part's start)
    ended_at: str | None = None
    error: str | None = None


class DiscoveryState(BaseModel):
    """RUN/discovery.json: what the run was started with and where it stands."""

    model_config = ConfigDict(extra="forbid")
    task: str  # the task directory
    agent: AgentConfig
    propose_agent: AgentConfig
    rounds: int = Field(ge=1)
    parallel: int = Field(ge=1)
    limits: Limits = Field(default_factory=Limits)
    sandbox: str = "bwrap"
    sessions: list[SessionRecord] = Field(default_factory=list)
    started_at: str | None = None  # ISO time, UTC, of the run's first start
    stopped: str | None = None  # why the run stopped early (the cost limit), else None
    question: str | None = None  # what the prepare session asked a person (its QUESTIONS.md)
    answer: str | None = None  # the person's answer, shown to every later session
    final: dict | None = None  # the best submission's clean replay and scores

    def session(self, sid: str) -> SessionRecord | None:
        return next((s for s in self.sessions if s.id == sid), None)

    def cost(self) -> float:
        return sum(s.cost_usd or 0.0 for s in self.sessions)


class HistoryEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rank: int
    session: str
    round: int
    attempt: int
    metric: float
    message: str = ""
    description: str = ""
    at: str = ""


class RankedHistory(BaseModel):
    """RUN/history.json: every valid scored submission so far, best first (the task's direction)."""

    model_config = ConfigDict(extra="forbid")
    metric: str
    direction: str
    published: float
    entries: list[HistoryEntry] = Field(default_factory=list)
    submitted: int = 0  # every scored attempt, valid or not


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def find_runs(root: Path) -> dict[str, Path]:
    """Name -> directory of every discovery run at ``root`` or one level below it."""
    found = {}
    for d in [root, *sorted(p for p in root.iterdir() if p.is_dir())] if root.is_dir() else []:
        if (d / "discovery.json").is_file():
            found[d.name] = d
    return found


def read_state(out: Path) -> DiscoveryState:
    return DiscoveryState.model_validate_json((out / "discovery.json").read_text(encoding="utf-8"))


def session_parts(out: Path, rec: SessionRecord) -> list[TrialPaths]:
    """A session's trial directories, first part first: ``sessions/ID`` and, when --extend continued it, the
    part that ran out of time before (``sessions/ID.part1``)."""
    first = TrialPaths(out / "sessions" / f"{rec.id}.part1")
    main = TrialPaths(out / "sessions" / rec.id)
    return [first, main] if rec.extended_sec and first.root.is_dir() else [main]


def scored_attempts(out: Path, state: DiscoveryState) -> Iterator[tuple[SessionRecord, ScoringAttempt]]:
    """Every scored submission of every implement session of the run in ``out``, session by session."""
    for rec in state.sessions:
        if rec.phase != "implement":
            continue
        for tp in session_parts(out, rec):
            if tp.attempts.is_file():
                for line in tp.attempts.read_text(encoding="utf-8").splitlines():
                    yield rec, ScoringAttempt.model_validate_json(line)
