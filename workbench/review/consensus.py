"""Two (or more) independent reviewers per leaf: their agreement, the disputes, adjudication.

Agreement compares the first two reviewers of each leaf (their latest review each) as binary verdicts
(score >= 0.5 is "met"): percent agreement and Cohen's kappa, per task and overall. A leaf whose
reviewers disagree is ``disputed`` in scores.json (see :mod:`.records`) and waits in the queue until an
adjudication decides it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import WorkbenchError
from ..paths import RunPaths
from ..store import Store
from .records import rescore_from_reviews
from .stats import binarize, cohen_kappa


def latest_reviews(reviews: pd.DataFrame) -> pd.DataFrame:
    """Each reviewer's latest review of each leaf (adjudications excluded), in the order reviewers came."""
    if reviews.empty:
        return reviews
    r = reviews[reviews["kind"] == "review"].sort_values("review_id")
    by = r.groupby(["trial_id", "leaf_id", "reviewer"], sort=False)["review_id"]
    latest = r.assign(first_review=by.transform("min"))
    return latest[latest["review_id"] == by.transform("max")].sort_values("first_review")


def pairs(reviews: pd.DataFrame) -> pd.DataFrame:
    """One row per leaf reviewed by at least two people: task, trial, leaf, the first two reviewers and scores."""
    rows = []
    for (trial, leaf), g in latest_reviews(reviews).groupby(["trial_id", "leaf_id"], sort=True):
        if len(g) >= 2:
            a, b = g.iloc[0], g.iloc[1]
            rows.append({"task": a.task, "trial_id": trial, "leaf_id": leaf, "reviewer_a": a.reviewer,
                         "score_a": float(a.score), "reviewer_b": b.reviewer, "score_b": float(b.score)})
    return pd.DataFrame(rows, columns=["task", "trial_id", "leaf_id", "reviewer_a", "score_a", "reviewer_b",
                                       "score_b"])


def _stats(p: pd.DataFrame) -> dict[str, Any]:
    a, b = binarize(p["score_a"]), binarize(p["score_b"])
    agree = sum(1 for x, y in zip(a, b, strict=True) if x == y)
    return {"leaves": len(p), "agree": agree, "percent_agreement": 100.0 * agree / len(p) if len(p) else float("nan"),
            "kappa": cohen_kappa(a, b)}


def agreement(store: Store, run: str) -> dict[str, Any]:
    """Reviewer agreement over doubly reviewed leaves: overall and per task."""
    p = pairs(store.reviews_for(run))
    return {"overall": _stats(p) if len(p) else None,
            "by_task": {t: _stats(g) for t, g in p.groupby("task", sort=True)}, "pairs": p}


def disputes(store: Store, run: str) -> pd.DataFrame:
    """The adjudication queue: leaves whose independent reviewers disagree, with what each said."""
    leaves = store.frame("leaf_scores")
    leaves = leaves[(leaves["run"] == run) & (leaves["status"] == "disputed")]
    reviews = latest_reviews(store.reviews_for(run))
    rows = []
    for lf in leaves.itertuples():
        said = reviews[(reviews["trial_id"] == lf.trial_id) & (reviews["leaf_id"] == lf.leaf_id)]
        rows.append({"trial_id": lf.trial_id, "leaf_id": lf.leaf_id, "phase": lf.phase,
                     "effective_weight": lf.effective_weight,
                     "reviews": "; ".join(f"{r.reviewer}: {r.score:g}" + (f" ({r.comment})" if r.comment else "")
                                          for r in said.itertuples())})
    return pd.DataFrame(rows, columns=["trial_id", "leaf_id", "phase", "effective_weight", "reviews"])


def set_reviewers_required(run_dir: Path | str, n: int, store: Store | None = None) -> int:
    """Require ``n`` independent reviewers per leaf in a run and re-decide every reviewed trial; returns
    how many trials were rescored."""
    if n < 1:
        raise WorkbenchError("at least one reviewer is required")
    run = RunPaths(Path(run_dir))
    if not run.trials.is_dir():
        raise WorkbenchError(f"{run.root} holds no trials/")
    store = store or Store.for_run(run.root)
    store.set_setting(run.root.name, "reviewers_required", str(n))
    reviewed = set(store.reviews_for(run.root.name)["trial_id"])
    for tid in sorted(reviewed):
        if run.trial(tid).scores.is_file():
            rescore_from_reviews(run.trial(tid).root, store)
    return len(reviewed)

