"""Stage 3 for ``scoring = "rubric"`` tasks: score frozen evidence leaf by leaf.

Deterministic leaves run their check; a missing input zeroes only that leaf. Judge and expert leaves
are ``pending_review`` (score None) while their evidence exists, and 0 when it does not. A check that
crashes is a workbench or rubric failure: the leaf is ``withheld`` and the trial flagged for
rescoring, never silently 0. A failing gate leaf zeroes its sibling leaves.
"""

from __future__ import annotations

import logging
import math
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import WorkbenchError
from ..evidence import Evidence, MissingEvidence, ensure_intact, normalize
from ..io import atomic_write_json, read_json, sha256_bytes, sha256_file
from ..paths import TrialPaths
from ..rubric import PHASES, Leaf, is_full
from ..task import Task
from . import qa, sota
from .checks import CheckSpecError, load_task_checks, run_check
from .judge import JudgeSettings, judge_leaf
from .results import COUNTED, LeafScore, Scores

log = logging.getLogger(__name__)


def score_leaf(leaf: Leaf, ev: Evidence, task_checks: dict, *, task: Task | None = None,
               judge: JudgeSettings | None = None, judge_dir: Path | None = None, force: bool = False) -> LeafScore:
    node = leaf.node
    method = node.scoring_method
    base = dict(id=node.id, title=node.label, phase=leaf.phase, effective_weight=leaf.effective_weight,
                method=method, scale=node.scale, critical=node.critical,
                evidence_refs=[normalize(e.path) for e in node.evidence_inputs])
    if method == "deterministic":
        try:
            out = run_check(node.check or {}, ev, task_checks)
        except MissingEvidence as miss:
            return LeafScore(**base, score=0.0, status="missing_evidence", rationale=f"missing evidence: {miss}")
        except CheckSpecError as exc:
            return LeafScore(**base, score=None, status="withheld", rationale="the rubric's check is invalid",
                             error=str(exc))
        except Exception as exc:  # a crashing check is an infrastructure failure, not the agent's
            log.warning("check for leaf %s crashed: %s", node.id, exc)
            return LeafScore(**base, score=None, status="withheld", rationale="the check crashed",
                             error="".join(traceback.format_exception_only(exc)).strip())
        refs = list(dict.fromkeys(base.pop("evidence_refs") + out.evidence_refs))
        return LeafScore(**base, score=out.score, status="scored", rationale=out.rationale, evidence_refs=refs)
    refs = base["evidence_refs"]
    missing = [r for r in refs if not ev.has_content(r)]
    if refs and len(missing) == len(refs):
        return LeafScore(**base, score=0.0, status="missing_evidence",
                         rationale="missing evidence: " + ", ".join(missing))
    if method == "judge" and judge is not None:
        return judged(leaf, ev, base, task, judge, judge_dir, force)
    if missing:
        return LeafScore(**base, score=0.0, status="missing_evidence",
                         rationale="missing evidence: " + ", ".join(missing))
    return LeafScore(**base, score=None, status="pending_review",
                     rationale=f"awaits {'an expert' if method == 'expert' else 'the judge or an expert'}")


def judged(leaf: Leaf, ev: Evidence, base: dict, task: Task, settings: JudgeSettings, judge_dir: Path,
           force: bool) -> LeafScore:
    out = judge_leaf(task, leaf, ev, settings, judge_dir, force=force)
    info = {"model": settings.model, "key": out.key, "fingerprint": out.parts, "cached": out.cached,
            "transcript": out.transcript, "calls_made": out.calls}
    if out.verdict is None:
        return LeafScore(**base, score=None, status="withheld", rationale="the judge failed",
                         error=out.error, usage=out.usage, judge=info)
    v = out.verdict
    if v.evidence_access == "missing":
        return LeafScore(**base, score=0.0, status="missing_evidence", rationale=f"judge: evidence missing: {v.reason}",
                         usage=out.usage, judge={**info, "checks": v.checks})
    return LeafScore(**base, score=v.score, status="scored", rationale=f"judge: {v.reason}", usage=out.usage,
                     judge={**info, "checks": v.checks, "evidence_access": v.evidence_access})


def apply_gates(leaves: list[Leaf], scores: dict[str, LeafScore]) -> None:
    for leaf in leaves:
        gate = scores[leaf.id]
        if not leaf.node.gate or gate.score is None or gate.score >= 1.0:
            continue
        for sib in leaf.siblings:
            s = scores[sib]
            if s.status != "withheld":
                scores[sib] = s.model_copy(update=dict(
                    score=0.0, status="gated", rationale=f"gated: gate leaf {leaf.id} failed ({gate.rationale})"))


def summarize(leaf_scores: list[LeafScore]) -> dict:
    """R, coverage and phase scores over leaves whose score counts (pending and withheld do not)."""
    counted = [s for s in leaf_scores if s.status in COUNTED and s.score is not None]
    r = math.fsum(s.effective_weight * s.score for s in counted)
    coverage = math.fsum(s.effective_weight for s in counted)
    phases = {p: math.fsum(s.effective_weight * s.score for s in counted if s.phase == p) for p in PHASES}
    phase_weights = {p: math.fsum(s.effective_weight for s in leaf_scores if s.phase == p) for p in PHASES}
    return dict(R=r, coverage=coverage, final=coverage >= 1 - 1e-9, full=is_full(r), phases=phases,
                phase_weights=phase_weights,
                needs_rescoring=any(s.status == "withheld" for s in leaf_scores))


def fingerprint(task: Task, manifest_digest: str | None) -> dict[str, str | None]:
    parts: dict[str, str | None] = {f.name: sha256_file(f) for f in task.scoring_files()}
    parts.update(evidence=manifest_digest, workbench=__version__)
    parts["digest"] = sha256_bytes(repr(sorted(parts.items())).encode())
    return parts


def judge_totals(leaf_scores: list[LeafScore]) -> dict[str, Any]:
    judged_leaves = [s for s in leaf_scores if s.usage]
    costs = [s.usage.get("cost_usd") for s in judged_leaves if s.usage.get("cost_usd") is not None]
    return {"leaves": len(judged_leaves),
            "calls_made": sum((s.judge or {}).get("calls_made", 0) for s in judged_leaves),
            "cached": sum(1 for s in judged_leaves if (s.judge or {}).get("cached")),
            "prompt_tokens": sum(s.usage.get("prompt_tokens", 0) for s in judged_leaves),
            "completion_tokens": sum(s.usage.get("completion_tokens", 0) for s in judged_leaves),
            "cost_usd": sum(costs) if costs else None}


def fingerprint_changes(previous: Scores | None, leaf_scores: list[LeafScore]) -> list[str]:
    """Judged leaves whose fingerprint differs from the previous scoring, and what changed."""
    if previous is None:
        return []
    old = {s.id: (s.judge or {}).get("fingerprint") for s in previous.leaves if s.judge}
    out = []
    for s in leaf_scores:
        new = (s.judge or {}).get("fingerprint")
        if new and old.get(s.id) and new != old[s.id]:
            what = [k for k in new if new[k] != old[s.id].get(k)]
            out.append(f"{s.id}: {', '.join(what)} changed")
    return out


def run_sota(task: Task, tp: TrialPaths) -> dict:
    """The hidden evaluator on the frozen evidence, in the task's environment; its failure is withheld."""
    from ..env import env_info

    spec = task.sota_spec
    env = env_info(task)
    python = f"{env['dir']}/bin/python" if env["dir"] else None
    try:
        results = sota.run_evaluator(task.paths.evaluator, tp.evidence, task.paths.tests / "refs", python=python,
                                     timeout=min(spec.timeout_sec, task.config.verifier.timeout_sec))
    except sota.EvaluatorFailed as exc:
        log.warning("%s: %s", tp.root.name, exc)
        return sota.evaluate(spec, None, str(exc))
    return sota.evaluate(spec, results)


def score_trial(task: Task, trial_dir: Path, *, judge: JudgeSettings | None = None,
                only_leaves: set[str] | None = None) -> Scores:
    tp = TrialPaths(Path(trial_dir))
    if not tp.provenance.is_file():
        raise WorkbenchError(f"{tp.provenance}: missing; the replay did not finish. Re-run it before scoring.")
    ensure_intact(tp.evidence)
    prov = read_json(tp.provenance)
    ev = Evidence(tp.evidence, prov)
    rubric = task.rubric
    task_checks = load_task_checks(task.paths.checks_py)
    sota_block = None
    if task.scoring == "sota":
        sota_block = run_sota(task, tp)
        task_checks.update(sota.instance_checks(task.sota_spec, sota_block))
    leaves = rubric.leaves
    previous = Scores.model_validate_json(tp.scores.read_text()) if tp.scores.is_file() else None
    if only_leaves:
        unknown = only_leaves - {lf.id for lf in leaves}
        if unknown:
            raise WorkbenchError(f"--only-leaves: no such leaves in {task.id}'s rubric: {', '.join(sorted(unknown))}")
        if previous is None:
            raise WorkbenchError(f"--only-leaves needs an existing {tp.scores}; score the whole trial first")
    kept = {s.id: s for s in previous.leaves} if previous and only_leaves else {}
    by_id = {}
    for lf in leaves:
        if only_leaves and lf.id not in only_leaves and lf.id in kept:
            by_id[lf.id] = kept[lf.id].model_copy(update={"effective_weight": lf.effective_weight})
        else:
            by_id[lf.id] = score_leaf(lf, ev, task_checks, task=task, judge=judge, judge_dir=tp.root / "judge",
                                      force=bool(only_leaves))
    apply_gates(leaves, by_id)
    leaf_scores = [by_id[lf.id] for lf in leaves]
    changes = fingerprint_changes(previous, leaf_scores)
    for c in changes:
        log.warning("judge fingerprint changed for leaf %s", c)
    scores = Scores(
        task=task.id,
        trial=tp.root.name,
        scoring=task.scoring,
        sota=sota_block,
        qa=qa.evaluate(task.questions, ev, leaf_scores) if task.scoring == "qa" else None,
        **summarize(leaf_scores),
        replay_status=prov.get("status"),
        leaves=leaf_scores,
        judge_usage=judge_totals(leaf_scores),
        fingerprint_changes=changes,
        fingerprint=fingerprint(task, sha256_file(tp.manifest)),
        scored_at=datetime.now(UTC).isoformat(timespec="seconds"),
        workbench_version=__version__,
    )
    from ..review.records import apply_stored_reviews

    scores = apply_stored_reviews(scores, tp)
    atomic_write_json(tp.scores, scores.model_dump())
    return scores
