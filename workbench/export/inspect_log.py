"""Inspect AI eval logs (its JSON log format, version 2) for a run, to browse with ``inspect view``.

One log per agent configuration x task: Inspect's unit is one task evaluated with one model, and its
epochs are repeated attempts, so each trial is one sample with ``id`` = task and ``epoch`` = attempt.
Each sample's scores are R and the three phase scores (the graded leaf tree in R's metadata), its messages
come from session/trajectory.jsonl and its model usage from session/usage.json. A trial that did not
finish is a sample with an error and no scores. Only the subset of the format we fill is modelled here.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..batch.matrix import is_credential
from ..errors import WorkbenchError
from ..io import atomic_write_json
from ..paths import TrialPaths
from ..rubric import PHASES
from ..scoring.results import read_scores
from ..session.ledger import read_delivery, read_usage
from ..trajectory import _arguments, read_trajectory
from ..trial.record import TrialRecord, read_trial
from ..version import __version__
from . import trial_dirs

SCORERS = ("R", *PHASES)
_ROLE = {"system": "system", "user": "user", "assistant": "assistant", "agent": "assistant"}


class ToolCall(BaseModel):
    id: str
    function: str
    arguments: dict[str, Any]
    type: Literal["function"] = "function"


class ChatMessage(BaseModel):
    id: str
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    source: Literal["input", "generate"] | None = None
    model: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    function: str | None = None
    metadata: dict[str, Any] | None = None


class ModelUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    total_cost: float | None = None


class Score(BaseModel):
    value: float
    explanation: str | None = None
    metadata: dict[str, Any] | None = None


class EvalError(BaseModel):
    message: str
    traceback: str = ""
    traceback_ansi: str = ""


class ModelOutput(BaseModel):
    model: str
    choices: list[Any] = Field(default_factory=list)
    completion: str = ""


class EvalSample(BaseModel):
    id: str
    epoch: int
    input: str
    target: str = ""
    messages: list[ChatMessage]
    output: ModelOutput
    scores: dict[str, Score] | None = None
    metadata: dict[str, Any]
    model_usage: dict[str, ModelUsage]
    started_at: str | None = None
    completed_at: str | None = None
    total_time: float | None = None
    uuid: str
    error: EvalError | None = None


class EvalMetric(BaseModel):
    name: str
    value: float


class EvalScore(BaseModel):
    name: str
    scorer: str
    scored_samples: int
    unscored_samples: int
    metrics: dict[str, EvalMetric]


class EvalResults(BaseModel):
    total_samples: int
    completed_samples: int
    scores: list[EvalScore]


class EvalStats(BaseModel):
    started_at: str
    completed_at: str
    model_usage: dict[str, ModelUsage]


class EvalDataset(BaseModel):
    name: str
    samples: int
    sample_ids: list[str]


class EvalSpec(BaseModel):
    eval_id: str
    run_id: str
    created: str
    task: str
    task_id: str
    task_version: int = 0
    solver: str
    dataset: EvalDataset
    model: str
    config: dict[str, Any]
    packages: dict[str, str]
    metadata: dict[str, Any]


class PlanStep(BaseModel):
    solver: str
    params: dict[str, Any]


class EvalPlan(BaseModel):
    name: str = "plan"
    steps: list[PlanStep]


class EvalLog(BaseModel):
    """An Inspect eval log (``inspect_ai.log.EvalLog``), the fields we fill."""

    version: int = 2
    status: Literal["success", "error"]
    eval: EvalSpec
    plan: EvalPlan
    results: EvalResults
    stats: EvalStats
    error: EvalError | None = None
    samples: list[EvalSample]


def _id(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:22]


def model_name(rec: TrialRecord) -> str:
    """Inspect names models ``provider/model``; an agent without a model (oracle, nop) is ``none/<config>``."""
    model = rec.config.model
    if not model:
        return f"none/{rec.config.name}"
    return model if "/" in model else f"{rec.config.agent}/{model}"


def _public_config(rec: TrialRecord) -> dict[str, Any]:
    """The configuration without credentials (a run recorded before configurations refused them)."""
    cfg = rec.config.model_dump(mode="json", exclude_none=True)
    cfg["options"] = {k: ("***" if is_credential(k) else v) for k, v in cfg.get("options", {}).items()}
    return cfg


def _messages(tp: TrialPaths, instruction: str, model: str) -> list[ChatMessage]:
    records = read_trajectory(tp.trajectory) if tp.trajectory.is_file() else []
    out: list[ChatMessage] = []

    def add(**kw: Any) -> None:
        out.append(ChatMessage(id=f"{tp.root.name}-{len(out) + 1}", **kw))

    if instruction and not any(r.get("role") == "user" for r in records):
        add(role="user", content=instruction, source="input")  # the agent read it from the task, not a chat
    for rec in records:
        role = _ROLE.get(rec.get("role", ""), "assistant")
        extra = {k: rec[k] for k in ("turn", "timestamp", "kind", "usage", "cost_usd", "elapsed_sec") if k in rec}
        calls = [ToolCall(id=str(c.get("id")), function=str(c.get("name")), arguments=_arguments(c.get("arguments")))
                 for c in rec.get("tool_calls") or []]
        add(role=role, content=rec.get("message") or "", metadata=extra or None, tool_calls=calls or None,
            **({"source": "generate", "model": model} if role == "assistant" else {}))
        names = {c.id: c.function for c in calls}
        for obs in rec.get("observations") or []:
            call = str(obs.get("tool_call_id"))
            add(role="tool", content=str(obs.get("content") or ""),
                **({"tool_call_id": call, "function": names[call]} if call in names else {}))
    return out


def _usage(tp: TrialPaths) -> ModelUsage | None:
    u = read_usage(tp)
    if u is None or not (u.input_tokens or u.output_tokens or u.cost_usd):
        return None  # an agent that called no model (oracle, nop) used none
    return ModelUsage(input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                      total_tokens=u.input_tokens + u.output_tokens, total_cost=u.cost_usd)


def _scores(tp: TrialPaths) -> dict[str, Score] | None:
    s = read_scores(tp)
    if s is None:
        return None
    try:
        from .paperbench import graded_tree

        tree: Any = graded_tree(tp.root).model_dump(mode="json")
    except WorkbenchError:  # no rubric tree to hang the leaves on (another scoring mode, a moved task)
        tree = None
    leaves = [lf.model_dump(mode="json", include={"id", "title", "phase", "weight", "score", "status", "method",
                                                  "rationale"}) for lf in s.leaves]
    r = Score(value=s.R, explanation=f"R = {s.exact.get('R', s.R)}; full: {s.full}; coverage {s.coverage:g}"
              + ("" if s.final else f"; not final ({sum(lf.status != 'scored' for lf in s.leaves)} leaves open)"),
              metadata={"full": s.full, "final": s.final, "coverage": s.coverage, "R_upper": s.R_upper,
                        "exact": s.exact, "scoring": s.scoring, "leaves": leaves, "graded_task_tree": tree})
    phases = {p: Score(value=s.phases.get(p, 0.0), explanation=f"of {s.phase_weights.get(p, 0.0):g} in {p}",
                       metadata={"weight": s.phase_weights.get(p, 0.0)}) for p in PHASES}
    return {"R": r, **phases}


def _sample(tp: TrialPaths, rec: TrialRecord) -> EvalSample:
    instruction_md = Path(rec.task_dir) / "instruction.md" if rec.task_dir else None
    instruction = instruction_md.read_text() if instruction_md and instruction_md.is_file() else ""
    model = model_name(rec)
    delivery = read_delivery(tp)
    usage = _usage(tp)
    scores = _scores(tp) if rec.status == "complete" else None
    seconds = [st.seconds for st in rec.stages.values() if st.seconds is not None]
    error = None if rec.status == "complete" else EvalError(message=rec.error or f"trial {rec.status}")
    return EvalSample(
        id=rec.task, epoch=rec.attempt, input=instruction, messages=_messages(tp, instruction, model),
        output=ModelOutput(model=model, completion=delivery.message if delivery else ""), scores=scores,
        metadata={"trial": rec.id, "status": rec.status, "config": rec.config.name, "outcome": rec.outcome,
                  "stages": {k: v.status for k, v in rec.stages.items()}},
        model_usage={model: usage} if usage else {}, started_at=rec.started_at, completed_at=rec.finished_at,
        total_time=round(sum(seconds), 3) if seconds else None, uuid=_id("sample", str(tp.root.resolve())),
        error=error)


def _sum_usage(samples: list[EvalSample]) -> dict[str, ModelUsage]:
    total: dict[str, ModelUsage] = {}
    for s in samples:
        for m, u in s.model_usage.items():
            t = total.setdefault(m, ModelUsage(total_cost=None))
            t.input_tokens += u.input_tokens
            t.output_tokens += u.output_tokens
            t.total_tokens += u.total_tokens
            if u.total_cost is not None:
                t.total_cost = (t.total_cost or 0.0) + u.total_cost
    return total


def _results(samples: list[EvalSample]) -> EvalResults:
    scored = [s for s in samples if s.scores]
    scores = []
    for name in SCORERS:
        values = [s.scores[name].value for s in scored if s.scores and name in s.scores]
        metrics = {"mean": EvalMetric(name="mean", value=sum(values) / len(values) if values else 0.0)}
        if name == "R":
            full = [bool(s.scores["R"].metadata and s.scores["R"].metadata.get("full")) for s in scored if s.scores]
            metrics["full"] = EvalMetric(name="full", value=sum(full) / len(full) if full else 0.0)
        scores.append(EvalScore(name=name, scorer="workbench_rubric" if name == "R" else f"workbench_{name}",
                                scored_samples=len(values), unscored_samples=len(samples) - len(values),
                                metrics=metrics))
    return EvalResults(total_samples=len(samples), completed_samples=len(scored), scores=scores)


def eval_log(run_id: str, trials: list[tuple[TrialPaths, TrialRecord]]) -> EvalLog:
    """The log of one configuration on one task: its trials, by attempt."""
    trials = sorted(trials, key=lambda t: t[1].attempt)
    first = trials[0][1]
    samples = [_sample(tp, rec) for tp, rec in trials]
    started = min(rec.started_at for _, rec in trials)
    finished = max((rec.finished_at or rec.started_at) for _, rec in trials)
    failed = [s for s in samples if s.error]
    return EvalLog(
        status="error" if failed else "success",
        eval=EvalSpec(eval_id=_id(run_id, first.config.name, first.task), run_id=run_id, created=started,
                      task=first.task, task_id=_id("task", first.task), solver=first.config.agent,
                      dataset=EvalDataset(name=first.task, samples=1, sample_ids=[first.task]),
                      model=model_name(first), config={"epochs": max(rec.attempt for _, rec in trials)},
                      packages={"workbench": __version__},
                      metadata={"configuration": _public_config(first), "task_dir": first.task_dir,
                                "task_meta": first.task_meta}),
        plan=EvalPlan(steps=[PlanStep(solver=first.config.agent, params=_public_config(first))]),
        results=_results(samples), stats=EvalStats(started_at=started, completed_at=finished,
                                                   model_usage=_sum_usage(samples)),
        error=EvalError(message=f"{len(failed)} of {len(samples)} trials did not complete") if failed else None,
        samples=samples)


def _filename(log: EvalLog, config: str) -> str:
    """Inspect's own naming, ``<created>_<task>_<id>.json``, which its log listing parses back into task and
    id (so neither part may hold an ``_``; colons are not portable in file names)."""
    def safe(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9.+-]+", "-", text)

    return f"{safe(log.eval.created)}_{safe(log.eval.task)}_{safe(config)}.json"


def export_inspect(run_dir: Path, out: Path) -> list[Path]:
    """One Inspect eval log per (configuration, task) of the run's trials, written under ``out``."""
    groups: dict[tuple[str, str], list[tuple[TrialPaths, TrialRecord]]] = defaultdict(list)
    for trial in trial_dirs(run_dir):
        tp = TrialPaths(trial)
        rec = read_trial(tp)
        if rec is None:
            raise WorkbenchError(f"{tp.trial_json}: not a readable trial record")
        groups[(rec.config.name, rec.task)].append((tp, rec))
    run_id = Path(run_dir).resolve().name
    written = []
    for (config, _task), trials in sorted(groups.items()):
        log = eval_log(run_id, trials)
        path = Path(out) / _filename(log, config)
        atomic_write_json(path, log.model_dump(mode="json", exclude_none=True))
        written.append(path)
    return written
