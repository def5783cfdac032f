"""What an agent is shown of a task (:class:`PublicTask`, the public contract) and how long a text it is
shown at once (:func:`truncate`): shared by the agents and the workspace they work in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..task import Task

OBSERVATION_LIMIT = 8000


def truncate(text: str, limit: int = OBSERVATION_LIMIT) -> str:
    """Keep the head and the tail; say how much was cut (models and readers both need to know)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters truncated ...]\n{text[-half:]}"


@dataclass(frozen=True)
class PublicTask:
    task_id: str
    instruction: str
    paper_dir: Path | None
    timeout_sec: float
    cpus: int
    memory_mb: int
    # read-only context beside the contract, at /home/task/context/ (a discovery run's ranked history and
    # earlier rounds' workspaces): what the controller chose to show, never a sibling of the same round
    context_dir: Path | None = None
    gpus: int = 0  # the task's GPUs: each call of the session holds them (sandbox.gpus)

    @classmethod
    def of(cls, task: Task) -> PublicTask:
        paper = task.paths.paper_dir
        return cls(
            task_id=task.id,
            instruction=task.paths.instruction.read_text(encoding="utf-8"),
            paper_dir=paper if paper.is_dir() else None,
            timeout_sec=task.config.agent.timeout_sec,
            cpus=task.config.environment.cpus,
            memory_mb=task.config.environment.memory_mb,
            gpus=task.config.environment.gpus,
        )
