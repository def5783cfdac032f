"""A run to look at: the review run (mini task x {oracle, nop}, scored), made into a batch in progress."""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
from pathlib import Path

import pytest

from tests.review import conftest as _review

_scored_run, review_run = _review._scored_run, _review.review_run  # the review tests' run, as fixtures here

PLANNED = ["oracle", "nop", "slow", "late", "queued"]  # the batch's configurations, one attempt each


def make_batch(run: Path) -> None:
    """run.json of a batch planning five trials, of which oracle and nop are complete."""
    data = {"matrix": {"tasks": ["mini"], "attempts": 1, "agents": [{"name": n, "agent": "oracle"} for n in PLANNED]},
            "tasks": {"mini": "0" * 64}}
    (run / "run.json").write_text(json.dumps(data))


def add_running_trial(run: Path, name: str = "slow") -> Path:
    """A trial whose replay is running, its session's tokens and cost in the trajectory (as a live batch has)."""
    src = run / "trials" / "mini__nop__1"
    dst = run / "trials" / f"mini__{name}__1"
    dst.mkdir()
    rec = json.loads((src / "trial.json").read_text())
    rec.update(id=dst.name, status="running", finished_at=None, outcome={})
    rec["config"]["name"] = name
    rec["stages"]["replay"].update(status="running", seconds=None)
    rec["stages"]["score"].update(status="queued", seconds=None)
    rec["stages"]["review"].update(status="queued", seconds=None)
    (dst / "trial.json").write_text(json.dumps(rec))
    (dst / "session").mkdir()
    turns = [{"turn": 1, "role": "assistant", "message": "reading the paper", "usage":
              {"prompt_tokens": 1200, "completion_tokens": 300}, "cost_usd": 0.012},
             {"turn": 2, "role": "assistant", "message": "writing reproduce.sh", "usage":
              {"prompt_tokens": 2000, "completion_tokens": 500}, "cost_usd": 0.02}]
    (dst / "session" / "trajectory.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    return dst


def add_complete_trial(run: Path, name: str) -> Path:
    """A copy of the oracle's complete trial under another configuration name."""
    src = run / "trials" / "mini__oracle__1"
    dst = run / "trials" / f"mini__{name}__1"
    tmp = run / f".{dst.name}.tmp"
    shutil.copytree(src, tmp, symlinks=True)
    rec = json.loads((tmp / "trial.json").read_text())
    rec["id"], rec["config"]["name"] = dst.name, name
    (tmp / "trial.json").write_text(json.dumps(rec))
    tmp.rename(dst)  # appears at once, as a trial directory written atomically would
    return dst


@contextlib.contextmanager
def holding_lock(run: Path, tid: str):
    """Hold a trial's lock, as the process running it does."""
    (run / "locks").mkdir(exist_ok=True)
    with open(run / "locks" / f"{tid}.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
        fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.fixture
def view(review_run):
    """The view of ``review_run``'s directory served in this process: its base URL."""
    from workbench.view.server import ViewServer

    server = ViewServer(review_run.parent, review_url="http://127.0.0.1:9/review/", poll_seconds=0.5)
    server.start()
    yield server
    server.stop()
