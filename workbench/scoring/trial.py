"""Stage 3 for one trial: score its frozen evidence, finalise, and commit scores.json.

Scoring refuses evidence that does not match its manifest, or a manifest that does not match the
digest the replay attested in its provenance (outside the evidence). Leaves are scored by
:mod:`.leaves`, the scoring mode adds what it needs (:mod:`.modes`), the run's stored reviews are
applied by the finaliser (:mod:`.finalize`, the only R), and :func:`commit` writes scores.json and
derives trial.json's outcome and the index row from it.

A scoring is fingerprinted by every scoring input (all of the task's tests/, the evidence manifest,
the workbench version). ``only_leaves`` re-scores just those leaves and keeps the rest, but only when
the fingerprint is unchanged; otherwise every leaf is re-scored.

scores.json also says where the scoring's time went (``timing``: checks, judge, the rest; the cost per
trial the report shows beside the other stages); being measured, it stays out of the fingerprint.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import defaultdict
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import WorkbenchError
from ..evidence import Evidence, ensure_intact, read_manifest
from ..io import atomic_write_json, digest_of, read_json, sha256_bytes
from ..paths import RunPaths, TrialPaths, run_of
from ..reader.client import Reader
from ..rubric import Leaf
from ..task import Task
from ..trial.record import update_outcome
from ..version import __version__
from .finalize import ReviewRecord, finalize, machine_result
from .judge.settings import JudgeSettings
from .leaves import host_check, leaf_evidence_digest, score_leaf
from .modes import mode_of
from .qa import oeq_summary
from .recompute import run_recompute
from .results import LeafScore, Scores, ScoringTime, outcome_fields, read_scores

log = logging.getLogger(__name__)


def fingerprint(task: Task, manifest_digest: str | None) -> dict[str, str | None]:
    """What a scoring depends on: every scoring input of the task, the evidence, the workbench."""
    inputs = task.scoring_inputs()
    parts: dict[str, str | None] = {"scoring_inputs": digest_of(inputs), "evidence": manifest_digest,
                                    "workbench": __version__}
    parts["digest"] = digest_of({k: v or "" for k, v in parts.items()})
    return parts


def judge_totals(leaf_scores: list[LeafScore]) -> dict[str, Any]:
    judged_leaves = [s for s in leaf_scores if s.usage]
    costs = [s.usage.get("cost_usd") for s in judged_leaves if s.usage.get("cost_usd") is not None]
    return {"leaves": len(judged_leaves),
            "calls_made": sum((s.judge or {}).get("calls_made", 0) for s in judged_leaves),
            "cached": sum(1 for s in judged_leaves if (s.judge or {}).get("cached")),
            "prompt_tokens": sum(s.usage.get("prompt_tokens", 0) for s in judged_leaves),
            "completion_tokens": sum(s.usage.get("completion_tokens", 0) for s in judged_leaves),
            "invalid_replies": sum(s.usage.get("invalid_replies", 0) for s in judged_leaves),
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


# --- reviews and the index -------------------------------------------------------------------------

def _store(tp: TrialPaths, store=None):
    """The run's results store, when the trial is in a run that has one (or one is configured)."""
    if store is not None:
        return store
    run = run_of(tp.root)
    if run is None or not (os.environ.get("WORKBENCH_STORE_URL") or RunPaths(run).results_db.is_file()):
        return None
    from ..store import Store

    return Store.for_run(run)


def stored_reviews(tp: TrialPaths, store=None) -> tuple[list[ReviewRecord], int]:
    """The trial's review records (oldest first) and the run's required reviewers per leaf."""
    st = _store(tp, store)
    run = run_of(tp.root)
    if st is None or run is None:
        return [], 1
    return (ReviewRecord.from_frame(st.reviews_for(run.name, tp.root.name)),
            int(st.get_setting(run.name, "reviewers_required", "1")))


def commit(tp: TrialPaths, scores: Scores, store=None) -> Scores:
    """Write scores.json (atomically), then derive from it trial.json's outcome and the trial's index row."""
    from sqlalchemy.exc import SQLAlchemyError  # here: the confined reader imports scoring without a database

    atomic_write_json(tp.scores, scores.model_dump())
    if update_outcome(tp, outcome_fields(scores)):
        st = _store(tp, store)
        if st is not None:
            try:
                st.upsert_trial(tp.root)
            except (SQLAlchemyError, WorkbenchError) as exc:  # scores.json stands; the index is rebuildable
                log.warning("%s: the results index was not updated (%s); run `workbench index %s`",
                            tp.root.name, exc, run_of(tp.root))
    return scores


def refinalize(trial_dir: Path | str, store=None) -> Scores:
    """Re-decide a scored trial from its machine results and the run's reviews (after a review is saved or
    the required reviewers change) and commit it; no check or judge runs again."""
    tp = TrialPaths(Path(trial_dir).resolve())
    scores = read_scores(tp, required=True)
    reviews, required = stored_reviews(tp, store)
    final, fields = finalize(scores.leaves, reviews, required, scores.evidence_digest)
    update: dict[str, Any] = {"leaves": final, **fields}
    if scores.qa is not None:  # expert-rated open questions change the OEQ ratings
        update["qa"] = {**scores.qa, **oeq_summary(final, scores.qa.get("oeq_ids", []))}
    return commit(tp, scores.model_copy(update=update), store)


# --- scoring ---------------------------------------------------------------------------------------

def load_receipts(tp: TrialPaths, prov: dict) -> dict | None:
    """The replay's receipts, refused like tampered evidence when they differ from the provenance's digest."""
    if not tp.receipts.is_file():
        return None
    data = tp.receipts.read_bytes()
    if prov.get("receipts_digest") and sha256_bytes(data) != prov["receipts_digest"]:
        raise WorkbenchError(f"{tp.receipts} differs from the digest the replay recorded; refusing to score")
    return json.loads(data)


def check_outcomes(leaves: list[Leaf], ev: Evidence, host_checks: dict, reader: Reader, has_checks_py: bool,
                   task: Task | None = None) -> dict[str, dict]:
    """The check outcome of every deterministic leaf: in the confined reader, all in one sandbox; a spot
    recomputation in the task's environment, confined too (:mod:`.recompute`); checks that read only the
    scoring mode's own result, such as ``sota:<instance>``, here."""
    det = [lf for lf in leaves if lf.node.scoring_method == "deterministic"]
    kind = {lf.id: (lf.node.check or {}).get("kind") for lf in det}
    here = [lf for lf in det if kind[lf.id] == "task" and (lf.node.check or {}).get("name") in host_checks]
    again = [lf for lf in det if kind[lf.id] == "recompute"]
    confined = [(lf.id, lf.node.check or {}) for lf in det if lf not in here and lf not in again]
    out = reader.checks(confined, task_checks=has_checks_py) if confined else {}
    out.update({lf.id: host_check(lf, ev, host_checks) for lf in here})
    out.update({lf.id: run_recompute(task, ev.root, lf.node.check or {}) for lf in again})
    return out


class Stopwatch:
    """Seconds one scoring spends in its parts (scores.json's ``timing``): checks, judge, the rest."""

    def __init__(self):
        self.start = time.perf_counter()
        self.spent: dict[str, float] = defaultdict(float)

    @contextmanager
    def part(self, name: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.spent[name] += time.perf_counter() - t

    def timing(self, judge_calls: int) -> ScoringTime:
        total = time.perf_counter() - self.start
        checks, judge = self.spent["checks"], self.spent["judge"]
        return ScoringTime(seconds=round(total, 3), checks_seconds=round(checks, 3), judge_seconds=round(judge, 3),
                           judge_calls=judge_calls, other_seconds=round(max(0.0, total - checks - judge), 3))


def _previous(tp: TrialPaths) -> Scores | None:
    try:
        return read_scores(tp)
    except ValueError:
        log.warning("%s: unreadable; scoring from scratch", tp.scores)
        return None


def same_task(task: Task, prov: dict) -> bool:
    """Whether a trial was replayed for ``task``: its name, or (a renamed copy) its content. An edited task
    of the same name is the same task (re-scoring after a rubric fix is the point of scoring again)."""
    return prov.get("task") == task.id or (prov.get("task_digest") is not None
                                           and prov.get("task_digest") == task.content_hash())


def score_trial(task: Task, trial_dir: Path | str, *, judge: JudgeSettings | None = None,
                only_leaves: set[str] | None = None, store=None, force: bool = False) -> Scores:
    """Stage 3: score a replayed trial's frozen evidence against the task's hidden rubric (or its mode's
    evaluator) and write scores.json; deterministic checks first, the LLM judge where a leaf asks for one,
    experts' reviews applied from the run's store.

    Args:
        task: the task the trial was replayed for.
        trial_dir: the trial directory (its evidence/ and replay/provenance.json).
        judge: the LLM judge's settings (None: judge leaves wait for an expert).
        only_leaves: re-score only these leaves, keeping the rest of the existing scores.json.
        store: the results store whose reviews apply (default: the run's).
        force: score a trial replayed for another task anyway.

    Returns:
        The :class:`Scores` written to scores.json.

    Raises:
        WorkbenchError: the replay did not finish, the evidence was changed since it was frozen, or the trial
            was replayed for another task (without ``force``).
    """
    watch = Stopwatch()
    tp = TrialPaths(Path(trial_dir).resolve())
    if not tp.provenance.is_file():
        raise WorkbenchError(f"{tp.provenance}: missing; the replay did not finish. Re-run it before scoring.")
    prov = read_json(tp.provenance)
    if not force and not same_task(task, prov):
        raise WorkbenchError(f"{tp.root}: replayed for task {prov.get('task')!r}, not {task.id!r}; scoring it "
                             f"against another task would replace its scores (they are kept; --force to do it)")
    digest = prov.get("evidence_manifest_digest")
    ensure_intact(tp.evidence, digest)
    ev = Evidence(tp.evidence, prov)
    manifest = read_manifest(tp.evidence)
    leaves = task.rubric.leaves
    previous = _previous(tp)
    fp = fingerprint(task, digest)
    kept: dict[str, LeafScore] = {}
    if only_leaves:
        unknown = only_leaves - {lf.id for lf in leaves}
        if unknown:
            raise WorkbenchError(f"--only-leaves: no such leaves in {task.id}'s rubric: {', '.join(sorted(unknown))}")
        if previous is None:
            raise WorkbenchError(f"--only-leaves needs an existing {tp.scores}; score the whole trial first")
        if previous.fingerprint.get("digest") != fp["digest"]:
            what = [k for k in fp if k != "digest" and previous.fingerprint.get(k) != fp[k]]
            log.warning("%s: scoring inputs changed since the last scoring (%s): every leaf is re-scored",
                        tp.root.name, ", ".join(what) or "fingerprint")
        else:
            kept = {lf.id: machine_result(lf) for lf in previous.leaves}

    mode = mode_of(task.scoring)
    with watch.part("checks"):  # a sota task's hidden evaluator runs here, confined like the checks
        extra, block = mode.prepare(task, tp.evidence, ev)  # checks that read the mode's result, not evidence
    reader = Reader(tp.evidence, prov, memory_mb=task.config.environment.memory_mb,
                    timeout_sec=task.config.verifier.timeout_sec, tests=task.paths.tests,
                    receipts=load_receipts(tp, prov))
    todo = [lf for lf in leaves if not (kept and lf.id not in only_leaves and lf.id in kept)]
    with watch.part("checks"):
        outcomes = check_outcomes(todo, ev, extra, reader, task.paths.checks_py.is_file(), task=task)
    machine, judge_calls = [], 0
    for lf in leaves:
        if lf not in todo:
            m = kept[lf.id].model_copy(update={"effective_weight": lf.effective_weight, "weight": str(lf.weight),
                                               "gate_scope": list(lf.gate_scope)})
        else:
            judged = judge is not None and lf.node.scoring_method == "judge"
            with watch.part("judge") if judged else nullcontext():
                m = score_leaf(lf, ev, outcomes.get(lf.id), task=task, judge=judge, trial=tp,
                               force=bool(only_leaves), reader=reader)
            judge_calls += (m.judge or {}).get("calls_made", 0)
        machine.append(m.model_copy(update={"evidence_digest": leaf_evidence_digest(manifest, m.evidence_refs)}))
    changes = fingerprint_changes(previous, machine)
    for c in changes:
        log.warning("judge fingerprint changed for leaf %s", c)
    reviews, required = stored_reviews(tp, store)
    final, fields = finalize(machine, reviews, required, digest)
    scores = Scores(
        task=task.id,
        trial=tp.root.name,
        scoring=task.scoring,
        **mode.summarize(task, ev, block, final),
        **fields,
        replay_status=prov.get("status"),
        leaves=final,
        judge_usage=judge_totals(final),
        fingerprint_changes=changes,
        fingerprint=fp,
        scored_at=datetime.now(UTC).isoformat(timespec="seconds"),
        workbench_version=__version__,
        timing=watch.timing(judge_calls),
    )
    return commit(tp, scores, store)
