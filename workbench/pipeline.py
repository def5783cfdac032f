"""Running trials: session -> replay -> score, recorded in trial.json; run.json locks the tasks.

A trial id is deterministic from (task, configuration, attempt), so re-running the same trial lands in
the same directory and a batch can tell what is already done.
"""

from __future__ import annotations

import logging
import re
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from . import __version__
from .errors import WorkbenchError
from .evidence import make_writable
from .io import atomic_write_json, read_json
from .paths import RunPaths, TrialPaths
from .replay import replay
from .scoring import score_trial
from .session import run_session
from .task import Task

log = logging.getLogger(__name__)

STAGES = ("session", "replay", "score")


class StageRecord(BaseModel):
    status: Literal["pending", "running", "done", "failed"] = "pending"
    started_at: str | None = None
    seconds: float | None = None
    error: str | None = None


class TrialRecord(BaseModel):
    """trial.json"""

    id: str
    task: str
    config: dict[str, Any]
    attempt: int
    status: Literal["running", "complete", "failed"] = "running"
    stages: dict[str, StageRecord] = Field(default_factory=lambda: {s: StageRecord() for s in STAGES})
    outcome: dict[str, Any] = Field(default_factory=dict)
    workbench_version: str = __version__


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def trial_id(task_id: str, config_name: str, attempt: int) -> str:
    return f"{_slug(task_id)}__{_slug(config_name)}__{attempt}"


def lock_run(run: RunPaths, task: Task, config: dict[str, Any]) -> None:
    """Record the task's content hash in run.json; refuse when the task changed under an existing run."""
    data = read_json(run.run_json) if run.run_json.is_file() else {"tasks": {}, "configs": {}}
    digest = task.content_hash()
    old = data["tasks"].get(task.id)
    if old and old != digest:
        raise WorkbenchError(
            f"task {task.id} changed since {run.root} recorded it; results would mix task versions. "
            f"Use a new --out directory (or delete {run.run_json} to start the run over)."
        )
    data["tasks"][task.id] = digest
    data["configs"][config["name"]] = config
    data["workbench_version"] = __version__
    atomic_write_json(run.run_json, data)


def _stage(record: TrialRecord, tp: TrialPaths, name: str, fn: Callable[[], Any]) -> Any:
    st = record.stages[name]
    st.status, st.started_at = "running", datetime.now(UTC).isoformat(timespec="seconds")
    atomic_write_json(tp.trial_json, record.model_dump())
    t0 = time.monotonic()
    try:
        out = fn()
    except Exception as exc:
        st.status, st.error, st.seconds = "failed", f"{type(exc).__name__}: {exc}", round(time.monotonic() - t0, 3)
        record.status = "failed"
        atomic_write_json(tp.trial_json, record.model_dump())
        raise
    st.status, st.seconds = "done", round(time.monotonic() - t0, 3)
    atomic_write_json(tp.trial_json, record.model_dump())
    return out


def run_trial(task: Task, agent: str, out: Path, *, attempt: int = 1, config_name: str | None = None,
              timeout: float | None = None, sandbox: str = "bwrap") -> TrialRecord:
    """One trial end to end into ``out/trials/<trial-id>/``; returns its trial.json record."""
    run = RunPaths(Path(out))
    config = {"name": config_name or agent, "agent": agent}
    lock_run(run, task, config)
    tid = trial_id(task.id, config["name"], attempt)
    tp = run.trial(tid)
    if tp.root.exists():
        make_writable(tp.root)
        shutil.rmtree(tp.root)
    tp.root.mkdir(parents=True)
    record = TrialRecord(id=tid, task=task.id, config=config, attempt=attempt)

    delivery = _stage(record, tp, "session", lambda: run_session(task, agent, tp.root))
    prov = _stage(record, tp, "replay",
                  lambda: replay(task, tp.submission, tp.root, timeout=timeout, sandbox=sandbox))
    scores = _stage(record, tp, "score", lambda: score_trial(task, tp.root))
    record.status = "complete"
    record.outcome = {
        "delivery": delivery.status,
        "replay": prov.status,
        "R": scores.R,
        "full": scores.full,
        "coverage": scores.coverage,
        "final": scores.final,
        "phases": scores.phases,
    }
    atomic_write_json(tp.trial_json, record.model_dump())
    return record
