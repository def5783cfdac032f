"""Review records and what they do to a trial's scores.

Records are appended to the results store and never rewritten (who, when, leaf, old and new score,
comment). A leaf's final score follows **adjudication > expert > judge/check**:

* the latest adjudication, if any, decides (status ``adjudicated``);
* else, once the run's required number of independent reviewers (default 1) have reviewed the leaf,
  their latest scores decide if they agree (binary verdicts equal; continuous scores within 0.25):
  the mean, status ``reviewed``; if they disagree the leaf is ``disputed`` (no score, outside R and
  coverage) until someone adjudicates;
* else the judge's or check's score stands.

The machine result is kept in the leaf (``machine``) so the decisions can always be recomputed from the
store; ``scores.json``, R and the index are rewritten after every review, and re-scoring a trial
re-applies its reviews.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import WorkbenchError
from ..io import atomic_write_json
from ..paths import TrialPaths
from ..store import Store
from .agreement import binarize

CONTINUOUS_AGREEMENT = 0.25
KINDS = ("review", "adjudication")


def reviewers_required(store: Store, run: str) -> int:
    return int(store.get_setting(run, "reviewers_required", "1"))


def resolve(rows: pd.DataFrame, required: int, scale: str = "binary") -> dict[str, Any] | None:
    """The expert decision for one leaf from its review records (oldest first), or None."""
    if rows.empty:
        return None
    adj = rows[rows["kind"] == "adjudication"]
    if not adj.empty:
        last = adj.iloc[-1]
        return {"score": float(last.score), "status": "adjudicated", "reviewers": [last.reviewer],
                "rationale": f"adjudicated by {last.reviewer}" + (f": {last.comment}" if last.comment else "")}
    latest = rows[rows["kind"] == "review"].groupby("reviewer", sort=False).tail(1)
    if len(latest) < required:
        return None
    scores = [float(x) for x in latest.score]
    who = list(latest.reviewer)
    agree = len(set(binarize(scores))) == 1 and (scale == "binary" or max(scores) - min(scores) <= CONTINUOUS_AGREEMENT)
    if not agree:
        return {"score": None, "status": "disputed", "reviewers": who,
                "rationale": "reviewers disagree (" + ", ".join(f"{w}: {s:g}" for w, s in zip(who, scores, strict=True))
                             + "); awaiting adjudication"}
    comments = "; ".join(f"{w}: {c}" for w, c in zip(who, latest.comment, strict=True) if c)
    return {"score": sum(scores) / len(scores), "status": "reviewed", "reviewers": who,
            "rationale": f"reviewed by {', '.join(who)}" + (f" ({comments})" if comments else "")}


def apply_reviews(scores, reviews: pd.DataFrame, required: int):
    """A copy of ``scores`` (a Scores) with expert decisions applied and R recomputed.

    Gates act on the machine scores; an expert decision overrides only the leaf it is about."""
    from ..scoring.results import LeafScore
    from ..scoring.rubric_scorer import summarize

    leaves = []
    for lf in scores.leaves:
        machine = lf.machine or {"score": lf.score, "status": lf.status, "rationale": lf.rationale}
        base = lf.model_copy(update={**machine, "machine": None, "review": None})
        rows = reviews[reviews["leaf_id"] == lf.id] if not reviews.empty else reviews
        decision = resolve(rows, required, lf.scale)
        if decision is None:
            leaves.append(base)
            continue
        leaves.append(LeafScore.model_validate({
            **base.model_dump(), "score": decision["score"], "status": decision["status"],
            "rationale": decision["rationale"], "machine": machine,
            "review": {"reviewers": decision["reviewers"], "records": int(len(rows))}}))
    update: dict[str, Any] = {"leaves": leaves, **summarize(leaves)}
    if scores.qa is not None:  # expert-rated open questions change the OEQ ratings
        from ..scoring.qa import oeq_summary

        update["qa"] = {**scores.qa, **oeq_summary(leaves, scores.qa.get("oeq_ids", []))}
    return scores.model_copy(update=update)


def run_of(trial_dir: Path | str) -> Path | None:
    """The run directory holding a trial (RUN/trials/TRIAL), or None for a trial outside a run."""
    root = Path(trial_dir).resolve()
    return root.parent.parent if root.parent.name == "trials" else None


def _require_run(tp: TrialPaths) -> Path:
    run = run_of(tp.root)
    if run is None:
        raise WorkbenchError(f"{tp.root} is not inside a run directory (RUN/trials/TRIAL); "
                             "reviews live in a run's store")
    return run


def apply_stored_reviews(scores, tp: TrialPaths):
    """``scores`` with the run's stored reviews applied, so re-scoring a trial never loses expert decisions."""
    import os

    run = run_of(tp.root)
    if run is None or not (os.environ.get("WORKBENCH_STORE_URL") or (run / "results.db").is_file()):
        return scores
    store = Store.for_run(run)
    found = store.reviews_for(run.name, tp.root.name)
    if found.empty:
        return scores
    return apply_reviews(scores, found, reviewers_required(store, run.name))


def rescore_from_reviews(trial_dir: Path | str, store: Store):
    """Re-apply every review of a trial to its scores.json (atomically) and refresh trial.json and the index."""
    from ..scoring.results import AWAITING, Scores

    tp = TrialPaths(Path(trial_dir))
    run = _require_run(tp)
    scores = Scores.model_validate_json(tp.scores.read_text())
    updated = apply_reviews(scores, store.reviews_for(run.name, tp.root.name), reviewers_required(store, run.name))
    atomic_write_json(tp.scores, updated.model_dump())
    if tp.trial_json.is_file():
        rec = json.loads(tp.trial_json.read_text())
        if rec.get("outcome"):
            rec["outcome"].update(R=updated.R, full=updated.full, coverage=updated.coverage, final=updated.final,
                                  phases=updated.phases,
                                  pending_review=sum(1 for lf in updated.leaves if lf.status in AWAITING))
            atomic_write_json(tp.trial_json, rec)
    store.upsert_trial(tp.root)
    return updated


def record_review(trial_dir: Path | str, leaf_id: str, score: float, *, reviewer: str, comment: str = "",
                  kind: str = "review", store: Store | None = None) -> dict[str, Any]:
    """Append a review (or adjudication) and recompute the trial's scores; returns what changed.

    Everything is checked before the record is written, so a rejected review leaves no trace."""
    tp = TrialPaths(Path(trial_dir))
    if not tp.scores.is_file():
        raise WorkbenchError(f"{tp.scores}: missing; score the trial before reviewing it")
    if kind not in KINDS:
        raise WorkbenchError(f"review kind must be one of {KINDS}")
    if not reviewer.strip():
        raise WorkbenchError("a review needs the reviewer's name")
    scores = json.loads(tp.scores.read_text())
    leaf = next((lf for lf in scores["leaves"] if lf["id"] == leaf_id), None)
    if leaf is None:
        raise WorkbenchError(f"{tp.scores}: no leaf {leaf_id!r}")
    if not 0.0 <= score <= 1.0:
        raise WorkbenchError(f"score {score} is outside [0, 1]")
    if leaf.get("scale", "binary") == "binary" and score not in (0.0, 1.0):
        raise WorkbenchError(f"leaf {leaf_id} is scored binary: the score must be 0 or 1, not {score}")
    run_dir = _require_run(tp)
    store = store or Store.for_run(run_dir)
    review_id = store.add_review(run=run_dir.name, trial_id=tp.root.name, task=scores["task"], leaf_id=leaf_id,
                                 reviewer=reviewer.strip(), score=score, previous_score=leaf["score"],
                                 comment=comment, kind=kind)
    updated = rescore_from_reviews(tp.root, store)
    new_leaf = next(lf for lf in updated.leaves if lf.id == leaf_id)
    return {"review_id": review_id, "trial_id": tp.root.name, "previous_score": leaf["score"],
            "leaf_status": new_leaf.status, "leaf_score": new_leaf.score, "R_before": scores["R"], "R": updated.R}
