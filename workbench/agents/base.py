"""The agent protocol: what an agent is given, and what it returns.

An agent sees a :class:`TaskView` (the public contract: instruction, paper, limits) and a working
copy of the starter submission; it changes that copy and returns. Only agents marked ``privileged``
(the oracle, which documents what a perfect delivery looks like) are handed the private task.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from ..task import Task


@dataclass(frozen=True)
class TaskView:
    task_id: str
    instruction: str
    paper_dir: Path | None
    timeout_sec: float
    cpus: int
    memory_mb: int

    @classmethod
    def of(cls, task: Task) -> TaskView:
        paper = task.paths.paper_dir
        return cls(
            task_id=task.id,
            instruction=task.paths.instruction.read_text(encoding="utf-8"),
            paper_dir=paper if paper.is_dir() else None,
            timeout_sec=task.config.agent.timeout_sec,
            cpus=task.config.environment.cpus,
            memory_mb=task.config.environment.memory_mb,
        )


@dataclass(frozen=True)
class Budget:
    wall_sec: float
    max_turns: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass
class AgentResult:
    status: Literal["completed", "refused", "error", "timeout", "budget_exhausted"]
    message: str = ""
    turns: int = 0
    usage: dict[str, Any] = field(default_factory=dict)


class Trajectory:
    """Appends one JSON record per turn to trajectory.jsonl."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.turns = 0

    def record(self, role: str, message: str, **extra: Any) -> None:
        self.turns += 1
        rec = {"turn": self.turns, "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
               "role": role, "message": message, **extra}
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, default=str) + "\n")


class Agent(Protocol):
    name: str
    privileged: bool
    model: str | None
    options: dict[str, Any]

    def run(self, view: TaskView, workdir: Path, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        """Work on ``workdir`` (the submission) and return; ``task`` only for privileged agents."""


class BaseAgent:
    """Holds the configuration every agent receives (``model``, ``options``)."""

    name = "base"
    privileged = False

    def __init__(self, model: str | None = None, options: dict[str, Any] | None = None):
        self.model = model
        self.options = dict(options or {})
