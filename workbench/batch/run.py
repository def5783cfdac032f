"""Batches: every (task, configuration, attempt) of a matrix, resumable, exactly once.

``run.json`` records the matrix and each task's content hash when a batch starts; ``--resume`` refuses
when either changed instead of mixing versions. On resume, complete trials are kept (never re-run),
interrupted ones are re-run from scratch, and ``infra_error`` trials are re-run only when asked
(``rerun_status``). Only one batch runs on a directory at a time; trials are written by whoever holds
their lock, and the index is updated by the batch process alone as trials finish.
"""

from __future__ import annotations

import fcntl
import json
import logging
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from ..agents import check_environments
from ..errors import WorkbenchError, lookup
from ..paths import RunPaths
from ..sandbox import host
from ..store import Store
from ..task import Task, load_task
from ..trial.pipeline import run_trial, trial_id
from ..trial.record import UNFINISHED, read_trial, record_digest
from ..version import __version__
from .executors import EXECUTORS, Size, get_executor
from .matrix import AgentConfig, Matrix, load_matrix
from .run_spec import RunSpec, read_run_spec, write_run_spec

log = logging.getLogger(__name__)

RERUNNABLE = ("infra_error", "complete")


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to run one trial (plain data: it crosses process boundaries)."""

    task_dir: str
    config: dict[str, Any]
    attempt: int
    out: str
    engine: str
    timeout: float | None
    sandbox: str
    fallbacks: dict[str, dict[str, Any]]
    judge: dict[str, Any] | None = None
    planned: str | None = None  # trial.json's digest when the batch planned this job (see run_trial)

    @property
    def trial_id(self) -> str:
        return trial_id(Path(self.task_dir).name, self.config["name"], self.attempt)


def run_job(job: Job) -> dict[str, Any]:
    """Worker entry point: run one trial; infrastructure failures come back as records, not raises."""
    fallbacks = {k: AgentConfig(**v) for k, v in job.fallbacks.items()}
    try:
        rec = run_trial(load_task(job.task_dir), AgentConfig(**job.config), Path(job.out), attempt=job.attempt,
                        engine=job.engine, timeout=job.timeout, sandbox=job.sandbox, fallbacks=fallbacks,
                        judge=job.judge, planned=job.planned)
        return rec.model_dump()
    except Exception as exc:
        rec = read_trial(RunPaths(Path(job.out)).trial(job.trial_id))
        if rec is not None and rec.status == "infra_error":
            return rec.model_dump()
        return {"id": job.trial_id, "status": "infra_error", "error": f"{type(exc).__name__}: {exc}"}


@dataclass
class BatchResult:
    out: Path
    total: int
    skipped: int
    counts: dict[str, int] = field(default_factory=dict)
    executor: str = ""
    dashboard: str | None = None
    interrupted: bool = False


# --- the spec on a run directory ---------------------------------------------------------------

def _matrix_spec(matrix: Matrix) -> dict[str, Any]:
    """What a resume must match: everything in the matrix except how it is executed."""
    return matrix.model_dump(exclude={"engine"})


def _describe_change(old: dict[str, Any], new: dict[str, Any]) -> str:
    diffs = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            if key == "agents":
                o = {a["name"]: a for a in old.get(key, [])}
                n = {a["name"]: a for a in new.get(key, [])}
                for name in sorted(set(o) | set(n)):
                    if name not in o or name not in n:
                        diffs.append(f"agents[{name}]: {'added' if name not in o else 'removed'}")
                    elif o[name] != n[name]:  # name the field, not just the configuration
                        diffs += [f"agents[{name}].{k}: {json.dumps(o[name].get(k))} -> {json.dumps(n[name].get(k))}"
                                  for k in sorted(set(o[name]) | set(n[name])) if o[name].get(k) != n[name].get(k)]
            else:
                diffs.append(f"{key}: {json.dumps(old.get(key))} -> {json.dumps(new.get(key))}")
    return "; ".join(diffs)


def batch_spec(run: RunPaths, matrix: Matrix, tasks: list[Task], resume: bool) -> RunSpec | None:
    """Refuse a resume of another matrix or task version; the run.json to write for a new batch, else None
    (written once the batch can start: an unreachable scheduler leaves no run.json behind)."""
    spec = RunSpec(matrix=_matrix_spec(matrix), tasks={t.id: t.content_hash() for t in tasks})
    old = read_run_spec(run)
    if old is not None:
        if not resume:
            raise WorkbenchError(f"{run.root} already holds a run; add --resume to continue it, or use a new --out")
        if old.matrix is None:
            raise WorkbenchError(f"{run.root} holds single `workbench run` trials, not a batch; use a new --out")
        if old.matrix != spec.matrix:
            raise WorkbenchError(f"refusing to resume {run.root}: the matrix changed since the batch started "
                                 f"({_describe_change(old.matrix, spec.matrix)}). Use a new --out.")
        changed = sorted(t for t, h in spec.tasks.items() if old.tasks.get(t) != h)
        if changed:
            raise WorkbenchError(f"refusing to resume {run.root}: task content changed since the batch started: "
                                 f"{', '.join(changed)}. Results would mix task versions; use a new --out.")
        return None
    if resume:
        raise WorkbenchError(f"nothing to resume in {run.root} (no run.json); drop --resume to start a batch")
    return spec.model_copy(update={"created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                                   "workbench_version": __version__})


@contextmanager
def exclusive_batch(run: RunPaths) -> Iterator[None]:
    run.root.mkdir(parents=True, exist_ok=True)
    with open(run.batch_lock, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WorkbenchError(f"another batch is running on {run.root}") from None
        yield


# --- planning and running ----------------------------------------------------------------------

def plan(matrix: Matrix, task_dirs: list[Path], out: Path, engine: str, sandbox: str | None = None) -> list[Job]:
    fallbacks = {a.name: a.model_dump() for a in matrix.agents}
    judge = {"model": matrix.judge_model} if matrix.judge_model else None
    jobs = []
    for d in task_dirs:
        for cfg in matrix.agents:
            fb = {cfg.fallback: fallbacks[cfg.fallback]} if cfg.fallback else {}
            for attempt in range(1, matrix.attempts + 1):
                jobs.append(Job(str(d), cfg.model_dump(), attempt, str(out), engine, matrix.replay_timeout,
                                sandbox or matrix.sandbox, fb, judge))
    return jobs


def why_run(jobs: list[Job], run: RunPaths, rerun_status: tuple[str, ...]) -> list[str | None]:
    """Per job, why it runs now ("new", "interrupted", or the status asked to be re-run), or None (kept)."""
    return [_why_run(read_trial(run.trial(job.trial_id)), rerun_status) for job in jobs]


def _why_run(rec, rerun_status: tuple[str, ...]) -> str | None:
    if rec is None:
        return "new"
    if rec.status in UNFINISHED:
        return "interrupted"
    return rec.status if rec.status in rerun_status else None


def resume_plan(reasons: list[str | None]) -> str:
    """What a resume does, in one line: what it keeps and what it runs again."""
    why = Counter(r or "kept" for r in reasons)
    parts = [f"{why.pop('kept', 0)} kept", f"{why.pop('interrupted', 0)} interrupted re-run from scratch"]
    parts += [f"{n} {status} re-run" for status, n in sorted(why.items()) if status != "new"]
    return "resume: " + ", ".join(parts) + f", {why.get('new', 0)} not run yet"


def job_sizes(tasks: dict[str, Task]) -> dict[str, Size]:
    """Each task directory's trial size (its cpus, memory and GPUs), which cluster executors ask for per trial,
    so a mixed matrix does not give every trial the largest task's size."""
    return {d: Size(t.config.environment.cpus, t.config.environment.memory_mb, t.config.environment.gpus)
            for d, t in tasks.items()}  # by the task directory its jobs name


def executor_options(executor: str, tasks: dict[str, Task], run: RunPaths, slurm: dict[str, Any]) -> dict[str, Any]:
    """The executor's own options: the trials' sizes for dask and slurm (one trial per SLURM job at a time),
    plus SLURM's partition, walltime, logs and job name."""
    if executor == "dask":
        return {"sizes": job_sizes(tasks)}
    if executor != "slurm":
        return {}
    return {**{k: v for k, v in slurm.items() if v is not None}, "sizes": job_sizes(tasks),
            "log_dir": run.executor_logs, "job_name": f"wb-{run.root.name}"}


def run_batch(matrix_path: Path, out: Path, *, executor: str = "local", workers: int = 2,
              scheduler: str | None = None, resume: bool = False, rerun_status: tuple[str, ...] = (),
              engine: str | None = None, progress: bool = True, sandbox: str | None = None,
              slurm: dict[str, Any] | None = None) -> BatchResult:
    """Run every (task, configuration, attempt) of a matrix into ``out``, each outcome exactly once; resumable.

    Args:
        matrix_path: the matrix (MATRIX.toml).
        out: the run directory (its run.json locks the matrix and the tasks' contents).
        executor: ``local`` (a process pool), ``dask`` or ``slurm``.
        workers: parallel trials (slurm: jobs kept in the queue).
        scheduler: an existing Dask scheduler's address to join (``executor="dask"``).
        resume: continue a batch: complete trials are kept, interrupted ones run again.
        rerun_status: with ``resume``, also run again trials in these states (``infra_error``).
        engine: ``papermill`` or ``inline`` (None: the matrix's).
        progress: show a progress bar.
        sandbox: ``bwrap`` or ``docker`` (None: the matrix's).
        slurm: partition, walltime, lifetime, lifetime_stagger for ``executor="slurm"`` (None: defaults).

    Returns:
        The :class:`BatchResult`: counts by status, the executor, whether it was interrupted.

    Raises:
        WorkbenchError: an unknown executor or bad option, an agent or judge that cannot start here, or a
            resumed run whose matrix or tasks changed.
    """
    from tqdm import tqdm

    lookup(EXECUTORS, "executor", executor)
    if scheduler and executor != "dask":
        raise WorkbenchError("--scheduler needs --executor dask")
    if executor != "slurm" and slurm and any(v is not None for v in slurm.values()):
        given = ", ".join(f"--{k.replace('_', '-')}" for k, v in slurm.items() if v is not None)
        raise WorkbenchError(f"{given} need(s) --executor slurm")
    bad = set(rerun_status) - set(RERUNNABLE)
    if bad:
        raise WorkbenchError(f"--rerun-status accepts {', '.join(RERUNNABLE)}; got {', '.join(sorted(bad))}")
    from ..scoring.judge.settings import JudgeSettings

    matrix, task_dirs = load_matrix(matrix_path)
    check_environments(matrix.agents)  # a missing endpoint or CLI is said now, not as N infra_error trials
    JudgeSettings.from_env(matrix.judge_model)  # so is a judge model without an endpoint
    tasks = [load_task(d) for d in task_dirs]
    if executor == "local" or (executor == "dask" and not scheduler):  # a cluster's nodes have their own
        for t in tasks:
            host.require(t)
    run = RunPaths(Path(out).resolve())
    with exclusive_batch(run):
        new_spec = batch_spec(run, matrix, tasks, resume)
        jobs = plan(matrix, task_dirs, run.root, engine or matrix.engine, sandbox)
        reasons = why_run(jobs, run, rerun_status)  # each trial record read once
        todo = [replace(job, planned=record_digest(run.trial(job.trial_id)))
                for job, why in zip(jobs, reasons, strict=True) if why]
        if resume and progress:
            print(resume_plan(reasons), file=sys.stderr)
        options = executor_options(executor, {str(d): t for d, t in zip(task_dirs, tasks, strict=True)}, run,
                                   slurm or {})
        ex = get_executor(executor, workers, scheduler, **options) if todo else None  # unreachable: said now
        if new_spec is not None:
            write_run_spec(run, new_spec)
        store = Store.for_run(run.root)
        store.rebuild(run.root)  # the index starts from what is on disk, whatever happened before
        result = BatchResult(out=run.root, total=len(jobs), skipped=len(jobs) - len(todo))
        counts: Counter[str] = Counter({"skipped": result.skipped})
        if ex is None:
            result.counts = dict(counts)
            return result
        result.executor, result.dashboard = ex.describe(), getattr(ex, "dashboard", None)
        if result.dashboard and progress:
            print(f"dask dashboard: {result.dashboard}", file=sys.stderr)
        bar = tqdm(total=len(jobs), initial=result.skipped, unit="trial", desc="batch", file=sys.stderr,
                   disable=not progress)
        queue: dict[str, int] = {}

        def show(state: dict[str, int] | None = None) -> None:
            queue.update(state or {})
            bar.set_postfix({**{k: v for k, v in sorted(counts.items()) if v}, **queue}, refresh=True)

        try:
            for job, res in ex.map_unordered(run_job, todo, on_state=show):
                status = res.get("status", "infra_error") if isinstance(res, dict) else "infra_error"
                if not isinstance(res, dict):
                    log.error("trial %s: worker failed: %s", job.trial_id, res)
                    rec = read_trial(run.trial(job.trial_id))
                    if rec is None or rec.status in UNFINISHED:  # half-written by a dead worker: never indexed
                        counts["interrupted"] += 1
                        bar.update(1)
                        show()
                        continue
                counts[status] += 1
                try:
                    store.upsert_trial(run.trial(job.trial_id).root)
                except SQLAlchemyError as exc:  # the index is derived: the trial directory stands, resume rebuilds
                    log.warning("results index not updated for %s: %s", job.trial_id, exc.__cause__ or exc)
                bar.update(1)
                show()
        except KeyboardInterrupt:
            result.interrupted = True
            ex.abort()
        else:
            ex.close()
        finally:
            bar.close()
        result.counts = dict(counts)
        return result


def summary_rows(run_dir: Path) -> list[dict[str, Any]]:
    """Per configuration: trials, complete, infra errors, mean R, full count (from the index), and how many
    complete outcomes are not final: *provisional* (leaves await review: R so far is a lower bound) and
    *withheld* (a judge or workbench failure: needs rescoring, left out of the mean)."""
    df = Store.for_run(run_dir).frame()
    df = df[df.run == Path(run_dir).resolve().name]  # a shared store holds other runs too
    rows = []
    for cfg, g in df.groupby("config", sort=True):
        done = g[g.status == "complete"]
        withheld = done.needs_rescoring.fillna(False).astype(bool)
        counted = done[~withheld]
        rows.append({"config": cfg, "trials": len(g), "complete": len(done),
                     "infra_error": int((g.status == "infra_error").sum()),
                     "mean_R": float(counted.R.mean()) if len(counted) else None,
                     "full": int(counted.full.fillna(False).astype(bool).sum()),
                     "provisional": int((~counted.final.fillna(False).astype(bool)).sum()),
                     "withheld": int(withheld.sum())})
    return rows

