"""The machine result of each rubric leaf: its deterministic check, the LLM judge, or a wait for an expert.

What a leaf's result may be, and why:

* a deterministic leaf runs its check in the confined reader (:mod:`workbench.reader.client`); a missing input
  zeroes only that leaf (``missing_evidence``); a check that fails on what the submission wrote, or a
  limit it hit reading it, scores 0 with the reason (:mod:`.faults`); only a malformed check or the
  workbench's own failure is ``withheld``;
* a judge leaf is judged when a judge is configured; an expert leaf (or a judge leaf without a judge)
  is ``pending_review`` while any of its evidence exists, and 0 when all of it is missing;
* the judge's "evidence missing" counts only when the workbench's own evidence gathering agrees
  (:mod:`.judge` re-asks otherwise, then the leaf is withheld).

Reviews, gates and R are applied afterwards, in one place (:mod:`.finalize`).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable

from ..evidence import Evidence, MissingEvidence, normalize
from ..io import digest_of
from ..paths import TrialPaths
from ..rubric import Leaf
from ..task import Task
from .checks import CheckOutcome, run_check
from .faults import caused_by_submission, describe
from .judge.leaf import judge_leaf
from .judge.settings import JudgeSettings
from .results import LeafScore

log = logging.getLogger(__name__)


def leaf_evidence_digest(manifest: dict[str, str], refs: list[str]) -> str:
    """What a leaf's evidence is: the frozen hash of every file each ref names (a file, a directory's
    files or a glob's matches); a ref naming nothing counts as missing."""
    picked: dict[str, str] = {}
    for ref in refs:
        hit = False
        glob = any(c in ref for c in "*?[")
        for rel, digest in manifest.items():
            if rel == ref or rel.startswith(ref.rstrip("/") + "/") or (glob and fnmatch.fnmatchcase(rel, ref)):
                picked[rel] = digest
                hit = True
        if not hit:
            picked[ref] = "missing"
    return digest_of(picked)


def _base(leaf: Leaf) -> dict:
    node = leaf.node
    return dict(id=node.id, title=node.label, phase=leaf.phase, effective_weight=leaf.effective_weight,
                weight=str(leaf.weight), method=node.scoring_method, scale=node.scale,
                gate_scope=list(leaf.gate_scope), evidence_refs=[normalize(e.path) for e in node.evidence_inputs])


def host_check(leaf: Leaf, ev: Evidence, task_checks: dict[str, Callable]) -> dict:
    """A check that reads no evidence file (the sota checks read the evaluator's result), run here, as an
    outcome like the confined reader's."""
    try:
        out: CheckOutcome = run_check(leaf.node.check or {}, ev, task_checks)
    except MissingEvidence as miss:
        return {"missing": str(miss)}
    except Exception as exc:
        return {"error": describe(exc), "code_fault": not caused_by_submission(exc)}
    return {"score": out.score, "rationale": out.rationale, "refs": out.evidence_refs}


def deterministic(leaf: Leaf, outcome: dict) -> LeafScore:
    """A deterministic leaf's result from its check's outcome (the reader's, or :func:`host_check`'s)."""
    base = _base(leaf)
    if "missing" in outcome:
        return LeafScore(**base, score=0.0, status="missing_evidence",
                         rationale=f"missing evidence: {outcome['missing']}")
    if "error" in outcome:
        if not outcome.get("code_fault"):
            return LeafScore(**base, score=0.0, status="scored", error=outcome["error"],
                             rationale=f"fail: the check could not use the submission's output ({outcome['error']})")
        log.warning("check for leaf %s failed: %s", leaf.id, outcome["error"])
        return LeafScore(**base, score=None, status="withheld", error=outcome["error"],
                         rationale="withheld: the rubric's check is broken (a task or workbench fault)")
    refs = list(dict.fromkeys(base.pop("evidence_refs") + list(outcome.get("refs") or [])))
    return LeafScore(**base, score=float(outcome["score"]), status="scored", rationale=outcome["rationale"],
                     evidence_refs=refs)


def judged(leaf: Leaf, ev: Evidence, task: Task, settings: JudgeSettings, trial: TrialPaths, force: bool,
           reader=None) -> LeafScore:
    base = _base(leaf)
    out = judge_leaf(task, leaf, ev, settings, trial, force=force, reader=reader)
    info = {"model": settings.model, "key": out.key, "fingerprint": out.parts, "cached": out.cached,
            "transcript": out.transcript, "calls_made": out.calls}
    if out.verdict is None:
        return LeafScore(**base, score=None, status="withheld", rationale="withheld: the judge failed",
                         error=out.error, usage=out.usage, judge=info)
    v = out.verdict
    if v.evidence_access == "missing":  # judge_leaf accepts it only when the workbench found inputs missing
        return LeafScore(**base, score=0.0, status="missing_evidence", rationale=f"judge: evidence missing: {v.reason}",
                         usage=out.usage, judge={**info, "checks": v.checks})
    return LeafScore(**base, score=v.score, status="scored", rationale=f"judge: {v.reason}", usage=out.usage,
                     judge={**info, "checks": v.checks, "evidence_access": v.evidence_access})


def score_leaf(leaf: Leaf, ev: Evidence, outcome: dict | None = None, *, task: Task | None = None,
               judge: JudgeSettings | None = None, trial: TrialPaths | None = None, force: bool = False,
               reader=None) -> LeafScore:
    """The machine result of one leaf (before reviews and gates); a deterministic leaf's check ``outcome``
    comes from the confined reader."""
    if leaf.node.scoring_method == "deterministic":
        return deterministic(leaf, outcome or {"error": "no outcome for this check", "code_fault": True})
    base = _base(leaf)
    refs = base["evidence_refs"]
    missing = [r for r in refs if not ev.has_content(r)]
    if refs and len(missing) == len(refs):
        return LeafScore(**base, score=0.0, status="missing_evidence",
                         rationale="missing evidence: " + ", ".join(missing))
    if leaf.node.scoring_method == "judge" and judge is not None:
        return judged(leaf, ev, task, judge, trial, force, reader)
    who = "an expert" if leaf.node.scoring_method == "expert" else "the judge or an expert"
    note = f" (missing: {', '.join(missing)})" if missing else ""
    return LeafScore(**base, score=None, status="pending_review", rationale=f"awaits {who}{note}")
