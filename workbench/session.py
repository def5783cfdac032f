"""Stage 1, agent session: the agent works on a copy of the starter submission; we record what it delivered.

The delivery probe classifies the result as ``absent`` (no reproduce.sh), ``starter_only`` (identical
to the starter) or ``delivered``, so a run that delivered nothing is told apart from a bad delivery.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from .agents import Budget, TaskView, Trajectory, get_agent
from .io import atomic_write_json, digest_of, tree_hashes
from .paths import TrialPaths
from .task import Task

log = logging.getLogger(__name__)


class Delivery(BaseModel):
    """session/delivery.json"""

    status: Literal["absent", "starter_only", "delivered"]
    agent: str
    agent_status: str
    message: str = ""
    files: int
    submission_digest: str
    starter_digest: str | None
    wall_sec: float


def probe_delivery(submission: Path, starter: Path) -> tuple[str, int, str, str | None]:
    sub = tree_hashes(submission) if submission.is_dir() else {}
    start = tree_hashes(starter) if starter.is_dir() else None
    if "reproduce.sh" not in sub:
        status = "absent"
    elif start is not None and sub == start:
        status = "starter_only"
    else:
        status = "delivered"
    return status, len(sub), digest_of(sub), digest_of(start) if start is not None else None


def run_session(task: Task, agent_name: str, trial_dir: Path, *, model: str | None = None,
                options: dict[str, Any] | None = None) -> Delivery:
    tp = TrialPaths(Path(trial_dir))
    agent = get_agent(agent_name, model=model, options=options)
    if tp.session.exists():
        shutil.rmtree(tp.session)
    tp.session.mkdir(parents=True)
    if task.paths.starter.is_dir():
        shutil.copytree(task.paths.starter, tp.submission, symlinks=True)
    else:
        tp.submission.mkdir()
    view = TaskView.of(task)
    budget = Budget(wall_sec=view.timeout_sec)
    trajectory = Trajectory(tp.trajectory)
    t0 = time.monotonic()
    result = agent.run(view, tp.submission, budget, trajectory, task if agent.privileged else None)
    wall = time.monotonic() - t0
    status, files, sub_digest, starter_digest = probe_delivery(tp.submission, task.paths.starter)
    tp.agent_log.write_text(f"{agent.name}: {result.status}: {result.message}\n", encoding="utf-8")
    atomic_write_json(tp.usage, {"turns": result.turns, "wall_sec": round(wall, 3),
                                 "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, **result.usage})
    delivery = Delivery(status=status, agent=agent.name, agent_status=result.status, message=result.message,
                        files=files, submission_digest=sub_digest, starter_digest=starter_digest,
                        wall_sec=round(wall, 3))
    atomic_write_json(tp.delivery, delivery.model_dump())
    log.info("session %s: %s delivered %s (%d files)", tp.root.name, agent.name, status, files)
    return delivery
