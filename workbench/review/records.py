"""Review records: who scored which leaf, of which evidence, and what that did to the trial.

Records are appended to the results store and never rewritten (who, when, leaf, old and new score,
comment, and what the review judged: the trial's evidence manifest digest and the leaf's evidence
digest). What a record does to the scores is decided in one place, the finaliser
(:mod:`workbench.scoring.finalize`): adjudication > agreeing reviewers > judge or check, then gates,
then R. A record of other evidence (the same trial id re-run with another submission) is *stale*:
shown in the reviewer and the review queue, never applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import WorkbenchError
from ..paths import RunPaths, TrialPaths, run_of
from ..scoring.finalize import KINDS, ReviewRecord
from ..scoring.results import read_scores
from ..scoring.trial import refinalize
from ..store import Store

__all__ = ["KINDS", "record_review", "rescore_from_reviews", "reviewers_required", "run_of", "stale_reviews"]


def reviewers_required(store: Store, run: str) -> int:
    return int(store.get_setting(run, "reviewers_required", "1"))


def _require_run(tp: TrialPaths) -> Path:
    run = run_of(tp.root)
    if run is None:
        raise WorkbenchError(f"{tp.root} is not inside a run directory (RUN/trials/TRIAL); "
                             "reviews live in a run's store")
    return run


def rescore_from_reviews(trial_dir: Path | str, store: Store):
    """Re-decide a trial from its machine results and every stored review; commits scores.json, trial.json's
    outcome and the index row."""
    _require_run(TrialPaths(Path(trial_dir)))
    return refinalize(trial_dir, store)


def stale_reviews(store: Store, run_dir: Path | str) -> pd.DataFrame:
    """Review records of a run that judged other evidence than the trial holds now: never applied."""
    run = Path(run_dir).resolve()
    rows = []
    reviews = store.reviews_for(run.name)
    for tid, group in (reviews.groupby("trial_id", sort=True) if not reviews.empty else []):
        found = read_scores(RunPaths(run).trial(tid))
        scores = found.model_dump(mode="json") if found else {"leaves": []}
        leaves = {lf["id"]: lf for lf in scores["leaves"]}
        for rec, row in zip(ReviewRecord.from_frame(group), group.itertuples(), strict=True):
            leaf = leaves.get(rec.leaf_id)
            if leaf is None or not rec.judged(scores.get("evidence_digest"), leaf.get("evidence_digest")):
                why = ("the trial has no such leaf now" if leaf is None else
                       "recorded before reviews were bound to evidence" if rec.evidence_digest is None else
                       "the trial's evidence changed since (re-run or re-replayed)")
                rows.append({"review_id": rec.review_id, "trial_id": tid, "leaf_id": rec.leaf_id,
                             "reviewer": rec.reviewer, "score": rec.score, "created_at": row.created_at, "why": why})
    return pd.DataFrame(rows, columns=["review_id", "trial_id", "leaf_id", "reviewer", "score", "created_at", "why"])


def record_review(trial_dir: Path | str, leaf_id: str, score: float, *, reviewer: str, comment: str = "",
                  kind: str = "review", store: Store | None = None) -> dict[str, Any]:
    """Append a review (or adjudication) of the leaf's current evidence and re-decide the trial. Everything is
    checked before the record is written, so a rejected review leaves no trace.

    Args:
        trial_dir: the trial directory (scored).
        leaf_id: the leaf reviewed.
        score: 0 or 1 for a binary leaf, in [0, 1] for a continuous one.
        reviewer: the reviewer's name.
        comment: what was checked and why.
        kind: ``review`` or ``adjudication`` (the final decision on a disputed leaf).
        store: the results store to append to (default: the run's).

    Returns:
        What changed: the review's id, the leaf's status and score, R before and after.

    Raises:
        WorkbenchError: no scores, no such leaf, a score outside the leaf's scale, no name.
    """
    tp = TrialPaths(Path(trial_dir).resolve())
    if not tp.scores.is_file():
        raise WorkbenchError(f"{tp.scores}: missing; score the trial before reviewing it")
    if kind not in KINDS:
        raise WorkbenchError(f"review kind must be one of {KINDS}")
    if not reviewer.strip():
        raise WorkbenchError("a review needs the reviewer's name")
    scores = read_scores(tp, required=True).model_dump(mode="json")
    leaf = next((lf for lf in scores["leaves"] if lf["id"] == leaf_id), None)
    if leaf is None:
        raise WorkbenchError(f"{tp.scores}: no leaf {leaf_id!r}")
    if not 0.0 <= score <= 1.0:
        raise WorkbenchError(f"score {score} is outside [0, 1]")
    if leaf.get("scale", "binary") == "binary" and score not in (0.0, 1.0):
        raise WorkbenchError(f"leaf {leaf_id} is scored binary: the score must be 0 or 1, not {score}")
    if not scores.get("evidence_digest") or not leaf.get("evidence_digest"):
        raise WorkbenchError(f"{tp.scores} was written before reviews were bound to evidence; "
                             f"re-score the trial (workbench score) before reviewing it")
    run_dir = _require_run(tp)
    store = store or Store.for_run(run_dir)
    review_id = store.add_review(run=run_dir.name, trial_id=tp.root.name, task=scores["task"], leaf_id=leaf_id,
                                 reviewer=reviewer.strip(), score=score, previous_score=leaf["score"],
                                 comment=comment, kind=kind, evidence_digest=scores["evidence_digest"],
                                 leaf_evidence=leaf["evidence_digest"])
    updated = rescore_from_reviews(tp.root, store)
    new_leaf = next(lf for lf in updated.leaves if lf.id == leaf_id)
    return {"review_id": review_id, "trial_id": tp.root.name, "previous_score": leaf["score"],
            "leaf_status": new_leaf.status, "leaf_score": new_leaf.score, "R_before": scores["R"], "R": updated.R}
