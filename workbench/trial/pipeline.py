"""Running one trial: session -> replay -> score -> review, through an engine, recorded in trial.json.

Engines run the same stage functions (:mod:`workbench.trial.stages`): ``papermill`` executes the stage
notebooks and keeps them in ``TRIAL/notebooks/``; ``inline`` calls the functions directly. A trial id
is deterministic from (task, configuration, attempt), so a re-run lands in the same directory.

A trial's status is ``complete`` (an outcome, whatever its score), ``infra_error`` (a stage raised:
the workbench, the sandbox or the environment failed, not the agent), ``interrupted`` (Ctrl-C) or
``running`` (its process died if found so on disk). Only the process holding the trial's lock writes
its directory. ``progress`` hears each stage start and end (the CLI prints them).
"""

from __future__ import annotations

import fcntl
import json
import logging
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..batch.matrix import AgentConfig
from ..batch.run_spec import RunSpec, read_run_spec, write_run_spec
from ..errors import WorkbenchError, lookup
from ..io import atomic_write_json, remove_tree
from ..paths import RunPaths, TrialPaths
from ..sandbox import host
from ..scoring.results import outcome_fields, read_scores
from ..task import Task
from ..version import __version__
from . import stages
from .record import UNFINISHED, StageRecord, TrialRecord, now, read_trial, record_digest

log = logging.getLogger(__name__)

LOCK_WAIT_SEC = 120.0


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def trial_id(task_id: str, config_name: str, attempt: int) -> str:
    return f"{_slug(task_id)}__{_slug(config_name)}__{attempt}"


# --- engines -----------------------------------------------------------------------------------

Progress = Callable[[str], None]


class InlineEngine:
    name = "inline"

    def __init__(self, progress: Progress | None = None):
        self.progress = progress

    def run(self, stage: str, params: dict[str, Any], tp: TrialPaths, notebook: str | None = None) -> dict:
        return stages.RUNNERS[stage](**params)


class PapermillEngine:
    name = "papermill"

    def __init__(self, progress: Progress | None = None):
        self.progress = progress

    def run(self, stage: str, params: dict[str, Any], tp: TrialPaths, notebook: str | None = None) -> dict:
        from ..jupyter.notebooks import run_stage_notebook

        # the kernel's warnings (waiting for free cores) reach the user as they happen
        return run_stage_notebook(stage, params, tp.notebooks, notebook, stderr=self.progress)


Engine = InlineEngine | PapermillEngine  # how a trial's stages run (`--engine`); not papermill's own engines
ENGINES: dict[str, type[Engine]] = {"inline": InlineEngine, "papermill": PapermillEngine}


def get_engine(name: str, progress: Progress | None = None) -> Engine:
    return lookup(ENGINES, "engine", name)(progress)


# --- locks -------------------------------------------------------------------------------------

@contextmanager
def trial_lock(run: RunPaths, tid: str, wait: float = LOCK_WAIT_SEC) -> Iterator[None]:
    """Exclusive right to write a trial's directory; released by the kernel if the holder dies."""
    run.locks.mkdir(parents=True, exist_ok=True)
    with open(run.lock(tid), "a+") as fh:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise WorkbenchError(f"trial {tid} is being run by another process (lock {fh.name})") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# --- a trial -----------------------------------------------------------------------------------

class _Runner:
    def __init__(self, record: TrialRecord, tp: TrialPaths, engine: Engine):
        self.record, self.tp, self.engine = record, tp, engine

    def save(self) -> None:
        atomic_write_json(self.tp.trial_json, self.record.model_dump())

    def say(self, text: str) -> None:
        if self.engine.progress:
            self.engine.progress(text)

    def stage(self, key: str, stage: str, params: dict[str, Any]) -> dict[str, Any]:
        st = self.record.stages.setdefault(key, StageRecord())
        st.status, st.started_at = "running", now()
        if self.engine.name == "papermill":
            from ..jupyter.notebooks import STAGE_NOTEBOOKS

            base = STAGE_NOTEBOOKS[stage]
            st.notebook = f"notebooks/{base if key == stage else base.replace('.ipynb', f'.{key}.ipynb')}"
        self.save()
        self.say(f"{key}: started")
        t0 = time.monotonic()
        try:
            out = self.engine.run(stage, params, self.tp, Path(st.notebook).name if st.notebook else None)
        except BaseException as exc:
            st.seconds = round(time.monotonic() - t0, 3)
            if isinstance(exc, KeyboardInterrupt):
                st.status, st.error = "failed", "interrupted"
                self.record.status, self.record.error = "interrupted", f"{key}: interrupted (Ctrl-C)"
            else:
                st.status, st.error = "failed", f"{type(exc).__name__}: {exc}"
                self.record.status, self.record.error = "infra_error", f"{key}: {st.error}"
            self.record.finished_at = now()
            self.save()
            self.say(f"{key}: {st.error} after {st.seconds:.1f} s")
            raise
        st.status, st.seconds = "done", round(time.monotonic() - t0, 3)
        self.save()
        self.say(f"{key}: done in {st.seconds:.1f} s")
        return out


def _session_params(p: dict[str, Any], cfg: AgentConfig, sandbox: str) -> dict[str, Any]:
    return {**p, "config": cfg.model_dump(), "sandbox": sandbox}


def run_trial(task: Task, config: AgentConfig, out: Path, *, attempt: int = 1, engine: str = "papermill",
              timeout: float | None = None, sandbox: str = "bwrap",
              fallbacks: dict[str, AgentConfig] | None = None, judge: dict[str, Any] | None = None,
              progress: Progress | None = None, planned: str | None = None) -> TrialRecord:
    """One trial end to end into ``out/trials/<trial-id>/``: the agent's session, the clean replay, scoring
    and the review stage, each recorded in trial.json; the caller holds no lock, this takes it.

    Args:
        task: the task.
        config: the agent configuration.
        out: the run directory.
        attempt: which attempt of this configuration on this task (one trial each).
        engine: ``papermill`` (an executed notebook per stage) or ``inline``.
        timeout: the replay's time limit in seconds (None: the task's).
        sandbox: ``bwrap`` or ``docker``.
        fallbacks: configurations by name, for a configuration whose ``fallback`` runs when it refuses.
        judge: ``{"model": ..., optional settings}`` turns on the LLM judge for judge leaves.
        progress: called with each stage's progress line.
        planned: a batch's :func:`record_digest` of trial.json when it planned this trial: a complete record
            found under the lock that is not the one planned over was written since, by this same job run
            before (a distributed executor may run a job twice), and is returned as it is.

    Returns:
        The trial's :class:`TrialRecord` (its outcome holds R when it completed; an infrastructure failure is
        ``infra_error`` with its cause, never a scored 0).
    """
    host.require(task)  # refused before the trial exists
    run = RunPaths(Path(out).resolve())
    tid = trial_id(task.id, config.name, attempt)
    with trial_lock(run, tid):
        if planned is not None and record_digest(run.trial(tid)) != planned:
            done = read_trial(run.trial(tid))
            if done is not None and done.status == "complete":
                log.warning("trial %s was completed by another run of this job since the batch planned it "
                            "(a lost worker's, or a dead batch's); kept, not run again", tid)
                return done
        return _run_locked(task, config, run.trial(tid), tid=tid, attempt=attempt,
                           engine=get_engine(engine, progress), timeout=timeout, sandbox=sandbox,
                           fallbacks=fallbacks or {}, judge=judge)


def _run_locked(task: Task, config: AgentConfig, tp: TrialPaths, *, tid: str, attempt: int, engine: Engine,
                timeout: float | None, sandbox: str, fallbacks: dict[str, AgentConfig],
                judge: dict[str, Any] | None) -> TrialRecord:
    """The trial from a clean directory, stage by stage, under the trial's lock (see :func:`run_trial`)."""
    remove_tree(tp.root)
    tp.root.mkdir(parents=True)
    md = task.config.metadata
    record = TrialRecord(id=tid, task=task.id, task_dir=str(task.root.resolve()), config=config, attempt=attempt,
                         engine=engine.name, task_meta={"field": md.field, "domain": md.domain, "scoring": md.scoring})
    r = _Runner(record, tp, engine)
    p = {"task_dir": str(task.root), "trial_dir": str(tp.root)}

    delivery = r.stage("session", "session", _session_params(p, config, sandbox))
    refused = delivery["agent_status"] == "refused"
    if refused and config.fallback:
        fb = fallbacks.get(config.fallback)
        if fb is None:
            raise WorkbenchError(f"configuration {config.name}: fallback {config.fallback!r} is not defined")
        shutil.move(tp.session, tp.session_refused)
        record.fallback = {"refused_by": config.name, "used": fb.name}
        delivery = r.stage("fallback_session", "session", _session_params(p, fb, sandbox))
    prov = r.stage("replay", "replay", {**p, "timeout": timeout, "sandbox": sandbox})
    r.stage("score", "score", {**p, "judge": judge})
    r.stage("review", "review", p)

    record.status, record.finished_at = "complete", now()
    record.outcome = {
        "delivery": delivery["status"],
        "agent_status": delivery["agent_status"],
        "refused": refused,
        "fallback_used": record.fallback["used"] if record.fallback else None,
        "replay": prov["status"],
        # the score fields come from scores.json, their one source (as after every later review)
        **outcome_fields(read_scores(tp, required=True)),
    }
    r.save()
    return record


# --- run.json ----------------------------------------------------------------------------------

def write_single_run_spec(run: RunPaths, task: Task, config: AgentConfig) -> None:
    """For `workbench run`: record the task's hash and the configuration; refuse changes under a run."""
    spec = read_run_spec(run) or RunSpec()
    if spec.matrix:
        raise WorkbenchError(f"{run.root} holds a batch; continue it with `workbench batch ... --resume`")
    digest = task.content_hash()
    if spec.tasks.get(task.id, digest) != digest:
        raise WorkbenchError(
            f"task {task.id} changed since {run.root} recorded it; results would mix task versions. "
            f"Use a new --out directory (or delete {run.run_json} to start the run over).")
    old = spec.configs.get(config.name)
    if old and old != config.model_dump():
        changed = "; ".join(f"{k}: {json.dumps(old.get(k))} -> {json.dumps(v)}"
                            for k, v in config.model_dump().items() if old.get(k) != v)
        raise WorkbenchError(f"configuration {config.name!r} differs from the one recorded in {run.run_json} "
                             f"({changed}); use --name for a new configuration, or a new --out")
    write_run_spec(run, spec.model_copy(update={"tasks": {**spec.tasks, task.id: digest},
                                                "configs": {**spec.configs, config.name: config.model_dump()},
                                                "workbench_version": __version__}))


def run_single(task: Task, config: AgentConfig, out: Path, *, attempt: int = 1, replace: bool = False,
               say: Progress | None = None, **options: Any) -> TrialRecord:
    """`workbench run` and the demo: one attempt of one configuration into the run folder ``out``.

    Refused before anything is recorded: an agent that cannot start here, a complete attempt already there
    (unless ``replace``), a task or configuration that changed under the run. An attempt whose process died
    or was interrupted is run again from scratch. ``options`` go to :func:`run_trial`."""
    from ..agents import check_environments  # the agents' modules import openai: only when a run starts

    check_environments([config])
    run = RunPaths(Path(out).resolve())
    existing = run.trial(trial_id(task.id, config.name, attempt))
    before = read_trial(existing)
    if before is not None and before.status in UNFINISHED:
        if say:
            say(f"{existing.root}: attempt {attempt} was {before.status} ({before.error or 'its process died'}); "
                "running it again from scratch")
    elif existing.trial_json.is_file() and not replace:
        raise WorkbenchError(f"{existing.root}: attempt {attempt} of {config.name!r} on {task.id} is already there; "
                             f"--attempt {attempt + 1} for another, or --force to replace it")
    write_single_run_spec(run, task, config)
    return run_trial(task, config, run.root, attempt=attempt, **options)
