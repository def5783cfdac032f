"""What `workbench view` shows of runs and trials, read from their directories (the source of truth).

The index (results.db) is updated only as trials finish; the directories also show a batch in progress:
trials running (and which stage), trials the matrix plans that have not started (``queued``), tokens
and cost so far (summed from the trajectory while the session runs). A trial recorded as running
whose lock nobody holds was interrupted (a killed batch): it says so instead of "running" forever.
"""

from __future__ import annotations

import fcntl
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..analysis.frames import run_dirs
from ..batch.run_spec import read_run_spec
from ..errors import WorkbenchError
from ..paths import RunPaths, TrialPaths
from ..scoring.results import AWAITING, Scores, read_scores
from ..session.ledger import SessionUsage, read_usage
from ..trajectory import read_trajectory
from ..trial.pipeline import trial_id
from ..trial.record import TrialRecord, read_trial

STATUSES = ("running", "queued", "complete", "infra_error", "interrupted")


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start:
        return None
    try:
        t0 = datetime.fromisoformat(start)
        t1 = datetime.fromisoformat(end) if end else datetime.now(UTC)
    except ValueError:
        return None
    return max(0.0, (t1 - t0).total_seconds())


def lock_held(run: RunPaths, tid: str) -> bool:
    """Whether a process holds the trial's lock (a probe that takes a shared lock for an instant)."""
    path = run.lock(tid)
    try:
        with open(path) as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
            return False
    except OSError:
        return False


def _usage(tp: TrialPaths) -> SessionUsage:
    """Agent tokens and cost: usage.json once the session ended, else summed from the trajectory so far."""
    try:
        usage = read_usage(tp)
    except WorkbenchError:  # a malformed usage.json: what the trajectory says
        usage = None
    if usage is not None or not tp.trajectory.is_file():
        return usage or SessionUsage()
    try:
        turns = read_trajectory(tp.trajectory)
    except (OSError, ValueError):
        return SessionUsage()
    return SessionUsage(turns=len(turns),
                        input_tokens=sum((t.get("usage") or {}).get("prompt_tokens") or 0 for t in turns),
                        output_tokens=sum((t.get("usage") or {}).get("completion_tokens") or 0 for t in turns),
                        cost_usd=sum(t.get("cost_usd") or 0.0 for t in turns) or None)


def shown_scores(tp: TrialPaths) -> Scores | None:
    """The trial's scores, or None where there are none or they are unreadable (the view shows a broken run)."""
    try:
        return read_scores(tp)
    except (OSError, ValueError, WorkbenchError):  # a broken run is shown, not served as an error
        return None


def trial_summary(run: RunPaths, tid: str, rec: TrialRecord | None = None) -> dict[str, Any]:
    """One row of the run list: status (and running stage), R, coverage, tokens, cost and time."""
    tp = run.trial(tid)
    rec = rec or read_trial(tp)
    if rec is None:
        return {"id": tid, "status": "queued"}
    status = rec.status
    if status == "running" and not lock_held(run, tid):
        status = "interrupted"
    stage = next((k for k, s in rec.stages.items() if s.status == "running"), None)
    scores = shown_scores(tp) if rec.status == "complete" else None
    usage = _usage(tp)
    judge_cost = (scores.judge_usage.get("cost_usd") if scores else None) or 0.0
    agent_cost = usage.cost_usd or 0.0
    if status == "interrupted":  # the time it worked, not the time since it died
        seconds = sum(s.seconds or 0.0 for s in rec.stages.values())
    else:
        seconds = _seconds(rec.started_at, rec.finished_at)
    return {
        "id": tid, "task": rec.task, "config": rec.config.name, "agent": rec.config.agent,
        "model": rec.config.model, "attempt": rec.attempt, "status": status,
        "stage": stage if status == "running" else None, "error": rec.error,
        "R": scores.R if scores else None, "R_upper": scores.R_upper if scores else None,
        "full": scores.full if scores else None, "coverage": scores.coverage if scores else None,
        "awaiting": sum(1 for lf in scores.leaves if lf.status in AWAITING) if scores else None,
        "tokens": usage.input_tokens + usage.output_tokens,
        "cost_usd": agent_cost + judge_cost if (agent_cost or judge_cost) else None,
        "seconds": seconds,
        "started_at": rec.started_at, "finished_at": rec.finished_at,
    }


def planned_trials(run: RunPaths) -> list[str]:
    """Trial ids a batch's matrix plans (run.json), in matrix order; empty for single `workbench run` trials."""
    try:
        spec = read_run_spec(run)
    except WorkbenchError:  # a malformed run.json: its trials are still shown, none planned
        return []
    matrix = (spec.matrix if spec else None) or {}
    try:
        return [trial_id(Path(t).name, a["name"], n) for t in matrix.get("tasks", [])
                for a in matrix.get("agents", []) for n in range(1, int(matrix.get("attempts", 1)) + 1)]
    except (KeyError, TypeError, ValueError):
        return []


def run_summary(root: Path) -> dict[str, Any]:
    """A run: its trials (recorded and planned), counts by status, mean R, tokens, cost and time so far."""
    run = RunPaths(root)
    present = sorted(d.name for d in run.trials.iterdir() if d.is_dir() and not d.is_symlink()) \
        if run.trials.is_dir() else []
    ids = present + [t for t in planned_trials(run) if t not in set(present)]
    trials = [trial_summary(run, t) for t in ids]
    counts = {s: sum(1 for t in trials if t["status"] == s) for s in STATUSES}
    done = [t["R"] for t in trials if t.get("R") is not None]
    starts = [t["started_at"] for t in trials if t.get("started_at")]
    ends = [t["finished_at"] for t in trials if t.get("finished_at")]
    ongoing = counts["running"] > 0 or not ends
    return {
        "name": run.root.name, "path": str(run.root), "batch": bool(planned_trials(run)),
        "trials": trials, "counts": counts, "total": len(trials),
        "mean_R": sum(done) / len(done) if done else None,
        "tokens": sum(t.get("tokens") or 0 for t in trials),
        "cost_usd": sum(t.get("cost_usd") or 0.0 for t in trials) or None,
        "seconds": _seconds(min(starts), None if ongoing else max(ends)) if starts else None,
        "active": counts["running"] > 0,
    }


def runs(root: Path) -> list[dict[str, Any]]:
    """Every run under ``root`` (or ``root`` itself when it is one), as :func:`run_summary`."""
    return [run_summary(d) for d in run_dirs(root)]


def find_run(root: Path, name: str) -> RunPaths | None:
    """The run called ``name`` among those under ``root``; never a path built from the name."""
    return next((RunPaths(d) for d in run_dirs(root) if d.name == name), None)


def find_trial(run: RunPaths, tid: str) -> TrialPaths | None:
    """The trial directory called ``tid`` in the run (a real directory, not a link), else None."""
    if not run.trials.is_dir():
        return None
    return next((TrialPaths(d) for d in run.trials.iterdir() if d.name == tid and d.is_dir() and not d.is_symlink()),
                None)
