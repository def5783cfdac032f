"""Scoring modes, one registry: what each ``[metadata] scoring`` mode adds to the rubric scoring.

Every mode scores a rubric (``rubric``: tests/rubric.json; ``sota``: one leaf per evaluation instance
unless a rubric is given; ``qa``: one leaf per question) through the same leaves, finaliser and R. A
mode adds:

* ``prepare``: task checks its leaves call and the mode's block before the leaves are scored (``sota``
  runs the hidden evaluator once; its ``sota:<instance>`` checks read the result);
* ``summarize``: the mode's block of scores.json (``sota``: g, bands and each instance's metric;
  ``qa``: MCQ metrics and the OEQ ratings of the final leaves; ``discovery``: the evaluator's metric,
  validity and message, and the progress towards the published record);
* ``feedback``: what the hidden scoring service may tell an agent about an attempt by default
  (``[verifier] feedback`` in task.toml overrides it). NatureBench-style ``sota`` tasks expose their
  metrics, g and band; a hidden rubric exposes nothing beyond the replay's outcome, since R and phase
  scores would let an agent hill-climb private leaves; a ``discovery`` evaluator's metric, validity and
  message are what its agents optimise (EurekAgent's official score).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from ..errors import lookup
from ..evidence import Evidence
from ..sandbox.environments import env_info
from ..task import Task
from ..task.model import Feedback
from .discovery import discovery_checks
from .discovery import summarize as summarize_discovery
from .evaluator import run_evaluator
from .qa import summarize_questions
from .results import LeafScore
from .sota import EvaluationRejected, EvaluatorFailed, instance_checks, summarize_instances

FEEDBACK: tuple[str, ...] = get_args(Feedback)  # what a scoring service answer can hold


@dataclass(frozen=True)
class Mode:
    name: str
    prepare: Callable[[Task, Path, Evidence], tuple[dict[str, Callable], dict[str, Any] | None]]
    summarize: Callable[[Task, Evidence, dict[str, Any] | None, list[LeafScore]], dict[str, Any]]
    feedback: tuple[str, ...]


def _nothing(task: Task, evidence_dir: Path, ev: Evidence):
    return {}, None


def _no_block(task: Task, ev: Evidence, block: dict[str, Any] | None, leaves: list[LeafScore]):
    return {}


def sota_block(task: Task, evidence_dir: Path) -> dict[str, Any]:
    """The hidden evaluator on a trial's frozen evidence, in the task's environment: the sota block."""
    spec = task.sota_spec
    env = env_info(task)
    python = f"{env['dir']}/bin/python" if env["dir"] else None
    try:
        results = run_evaluator(task.paths.evaluator, evidence_dir, task.paths.refs, python=python,
                                env_dir=env["dir"], memory_mb=task.config.environment.memory_mb,
                                timeout=min(spec.timeout_sec, task.config.verifier.timeout_sec))
    except EvaluatorFailed as exc:
        return summarize_instances(spec, None, str(exc), withheld=True)
    except EvaluationRejected as exc:
        return summarize_instances(spec, None, str(exc))
    return summarize_instances(spec, results)


def _sota_prepare(task: Task, evidence_dir: Path, ev: Evidence):
    block = sota_block(task, evidence_dir)
    return instance_checks(task.sota_spec, block), block


def _sota_block(task: Task, ev: Evidence, block: dict[str, Any] | None, leaves: list[LeafScore]):
    return {"sota": block}


def discovery_block(task: Task, evidence_dir: Path) -> dict[str, Any]:
    """The hidden evaluator's ``evaluate()`` on a trial's replayed submission, in the task's environment."""
    spec = task.discovery_spec
    env = env_info(task)
    python = f"{env['dir']}/bin/python" if env["dir"] else None
    try:
        results = run_evaluator(task.paths.evaluator, evidence_dir, task.paths.refs, python=python,
                                env_dir=env["dir"], memory_mb=task.config.environment.memory_mb,
                                timeout=min(spec.timeout_sec, task.config.verifier.timeout_sec), entry="evaluate")
    except EvaluatorFailed as exc:
        return summarize_discovery(spec, None, str(exc), withheld=True)
    except EvaluationRejected as exc:
        return summarize_discovery(spec, None, str(exc))
    return summarize_discovery(spec, results.get("result"))


def _discovery_prepare(task: Task, evidence_dir: Path, ev: Evidence):
    block = discovery_block(task, evidence_dir)
    return discovery_checks(task.discovery_spec, block), block


def _discovery_block(task: Task, ev: Evidence, block: dict[str, Any] | None, leaves: list[LeafScore]):
    return {"discovery": block}


def _qa_block(task: Task, ev: Evidence, block: dict[str, Any] | None, leaves: list[LeafScore]):
    return {"qa": summarize_questions(task.questions, ev, leaves)}


MODES: dict[str, Mode] = {
    "rubric": Mode("rubric", _nothing, _no_block, ("replay",)),
    "sota": Mode("sota", _sota_prepare, _sota_block, ("replay", "sota")),
    "qa": Mode("qa", _nothing, _qa_block, ("replay",)),
    "discovery": Mode("discovery", _discovery_prepare, _discovery_block, ("replay", "discovery")),
}


def mode_of(name: str) -> Mode:
    return lookup(MODES, "scoring mode", name)


def feedback_for(task: Task) -> tuple[str, ...]:
    """What the scoring service tells an agent for this task: its task.toml, else the mode's default."""
    chosen = task.config.verifier.feedback
    return tuple(chosen) if chosen is not None else mode_of(task.scoring).feedback
