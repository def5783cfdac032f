"""A discovery run's files: its state (``RUN/discovery.json``) and its ranked history (``RUN/history.json``).

Both are the controller's: they live in the run directory, which no session sees; a session is shown a
copy of the history (and earlier rounds' workspaces) read-only under /home/task/context/.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..matrix import AgentConfig

Phase = Literal["prepare", "propose", "implement"]
SessionStatus = Literal["pending", "running", "done", "failed"]


class Limits(BaseModel):
    """Budgets (EurekAgent §3.2): wall time per session of each phase, and cost across all sessions."""

    model_config = ConfigDict(extra="forbid")
    prepare_sec: float = Field(default=600.0, gt=0)
    propose_sec: float = Field(default=600.0, gt=0)
    implement_sec: float = Field(default=1800.0, gt=0)
    cost_usd: float | None = Field(default=None, gt=0, description="across every session; None: no limit")

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
    extended_sec: float = 0.0  # time granted by --extend
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
    stopped: str | None = None  # why the run stopped early (the cost limit), else None
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
