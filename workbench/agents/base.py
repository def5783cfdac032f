"""The agent protocol: what an agent is given, what it may spend, and what it returns.

An agent sees a :class:`PublicTask` (the public contract: instruction, paper, limits) and a
:class:`~workbench.agents.workspace.Workspace` (a sandboxed working copy of the starter submission
with the public task files beside it). It works there and returns an :class:`AgentResult`. Only agents
marked ``privileged`` (the oracle, which documents a perfect delivery) are handed the private task.

Statuses: ``completed`` (it finished or stopped on its own), ``refused`` (the model declined the task),
``timeout`` (the wall-clock budget ran out), ``budget_exhausted`` (turns, tokens or cost), ``agent_error``
(the agent itself failed). A failure of the infrastructure (the model endpoint after all retries, the
sandbox) is raised as an exception instead and becomes the trial's ``infra_error``; so is an agent that
could not start at all (:class:`AgentStartError`): a misconfiguration must not score 0 as if it had tried.
Each agent names the options it takes, and a configuration with any other is refused before a trial runs.
"""

from __future__ import annotations

import json
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import WorkbenchError
from ..task import Task
from .public_task import PublicTask, truncate

if TYPE_CHECKING:
    from .workspace import Workspace

class AgentStartError(WorkbenchError):
    """The agent could not start: its program is not installed, its credentials or inputs are missing.
    The trial becomes ``infra_error`` with this one-line cause, never an outcome scored 0."""


# options every agent takes (read by the session, not the agent)
SESSION_OPTIONS = frozenset({"scoring_service"})
# how a model's refusal begins; a session whose only answer reads like this is refused, not failed
REFUSAL = re.compile(r"^\W*(i'?m sorry|i am sorry|sorry,|i can(no|')t|i cannot|i won'?t|i will not|"
                     r"i'?m (not able|unable)|i am (not able|unable)|unfortunately,? i can)", re.I)

Status = Literal["completed", "refused", "timeout", "budget_exhausted", "agent_error"]
@dataclass
class Budget:
    """What a session may spend. Time is wall clock from the session's start."""

    wall_sec: float
    max_turns: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    warn_fraction: float = 0.1  # warn when this share of the time is left (at least 60 s before)
    started: float = field(default_factory=time.monotonic)
    paused_sec: float = 0.0  # time the clock stood still (official evaluations by the scoring service)
    _pause_start: float | None = None

    def elapsed(self) -> float:
        now = time.monotonic()
        running_pause = now - self._pause_start if self._pause_start is not None else 0.0
        return now - self.started - self.paused_sec - running_pause

    @contextmanager
    def paused(self):
        """Stop the session clock while the workbench, not the agent, is working."""
        self._pause_start = time.monotonic()
        try:
            yield
        finally:
            self.paused_sec += time.monotonic() - self._pause_start
            self._pause_start = None

    def remaining(self) -> float:
        return max(0.0, self.wall_sec - self.elapsed())

    def warn_at(self) -> float:
        """Seconds left at which the deadline warning is given."""
        return max(self.wall_sec * self.warn_fraction, min(60.0, self.wall_sec / 4))

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if self.input_per_mtok is None or self.output_per_mtok is None:
            return None
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


@dataclass
class Usage:
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    def add(self, prompt: int, completion: int, cost: float | None) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def over(self, budget: Budget) -> str | None:
        """Which budget is exhausted, if any."""
        if budget.max_turns is not None and self.turns >= budget.max_turns:
            return f"turn budget of {budget.max_turns} reached"
        if budget.max_tokens is not None and self.prompt_tokens + self.completion_tokens >= budget.max_tokens:
            return f"token budget of {budget.max_tokens} reached ({self.prompt_tokens + self.completion_tokens})"
        if budget.max_cost_usd is not None and (self.cost_usd or 0.0) >= budget.max_cost_usd:
            return f"cost budget of ${budget.max_cost_usd:g} reached (${self.cost_usd:.4f})"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"turns": self.turns, "input_tokens": self.prompt_tokens, "output_tokens": self.completion_tokens,
                "cost_usd": self.cost_usd}


@dataclass
class AgentResult:
    status: Status
    message: str = ""
    usage: Usage = field(default_factory=Usage)
    details: dict[str, Any] = field(default_factory=dict)


class Trajectory:
    """Appends one JSON record per turn to trajectory.jsonl (observations truncated with a marker)."""

    def __init__(self, path: Path, budget: Budget | None = None):
        self.path = Path(path)
        self.budget = budget
        self.turns = 0

    def record(self, role: str, message: str, *, tool_calls: list[dict] | None = None,
               observations: list[dict] | None = None, usage: dict | None = None, cost_usd: float | None = None,
               **extra: Any) -> None:
        self.turns += 1
        rec: dict[str, Any] = {"turn": self.turns, "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
                               "role": role, "message": message}
        if self.budget is not None:
            rec["elapsed_sec"] = round(self.budget.elapsed(), 3)
        if tool_calls:
            rec["tool_calls"] = tool_calls
        if observations:
            rec["observations"] = [{**o, "content": truncate(str(o.get("content", "")))} for o in observations]
        if usage:
            rec["usage"] = usage
        if cost_usd is not None:
            rec["cost_usd"] = cost_usd
        rec.update(extra)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, default=str) + "\n")


class Agent(Protocol):
    name: str
    privileged: bool
    default_network: str
    leases_gpus: bool  # it acquires and releases a GPU task's GPUs itself (else it holds them all session)

    def run(self, view: PublicTask, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        """Work in ``workspace`` and return; ``task`` only for privileged agents."""


class BaseAgent:
    """Holds the configuration every agent receives (``model``, ``options``)."""

    name = "base"
    privileged = False
    default_network = "none"
    leases_gpus = False
    options_known: frozenset[str] = frozenset()  # the options this agent reads

    @classmethod
    def check_config(cls, model: str | None, options: dict[str, Any]) -> None:
        """Refuse a configuration this agent cannot run (``ValueError``, one line): unknown options here."""
        unknown = sorted(set(options) - cls.options_known - SESSION_OPTIONS)
        if unknown:
            known = ", ".join(sorted(cls.options_known | SESSION_OPTIONS))
            raise ValueError(f"the {cls.name} agent has no option {', '.join(map(repr, unknown))} (it takes: {known})")

    @classmethod
    def check_environment(cls, model: str | None, options: dict[str, Any]) -> None:
        """Refuse to start where this agent cannot run (:class:`AgentStartError`): its program not installed,
        no endpoint or credentials. Called before any work starts (run, batch) and again by the agent."""

    def __init__(self, model: str | None = None, options: dict[str, Any] | None = None):
        self.model = model
        self.options = dict(options or {})
