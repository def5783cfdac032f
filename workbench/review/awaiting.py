"""What awaits a person in a run, and why: every leaf pending review, withheld or disputed.

``review queue`` lists only disputes; this is the whole to-do list (``review list RUN``), read from each
trial's scores.json (the one source of leaf statuses) and the run's review records, so a leaf that still
needs a second reviewer says how many it has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import WorkbenchError
from ..paths import RunPaths
from ..rubric import PHASES
from ..scoring.finalize import ReviewRecord
from ..scoring.results import AWAITING
from ..store import Store
from .records import reviewers_required


def why(leaf: dict[str, Any], reviews: int = 0, required: int = 1) -> str:
    """Why a leaf awaits review, in a few words: who or what it waits for."""
    status, method = leaf["status"], leaf.get("method")
    if status == "disputed":  # the finaliser's rationale names the reviewers and their scores
        return "disputed " + (leaf.get("rationale") or "").removeprefix("reviewers disagree ")
    if status == "withheld":
        cause = f" ({leaf['error']})" if leaf.get("error") else ""
        if leaf.get("judge"):
            return f"judge withheld: rescore it, or an expert{cause}"
        return f"check withheld: the rubric's check is broken, or an expert{cause}"
    if method == "judge":
        reason = "no judge configured: rescore with --judge-model, or an expert"
    else:
        reason = "needs an expert"
    if required > 1:
        reason += f" ({reviews} of {required} reviews)"
    stale = (leaf.get("review") or {}).get("stale")
    if stale:
        reason += f"; {stale} stale review(s) of other evidence"
    return reason


def awaiting_review(run_dir: Path | str, store: Store | None = None) -> list[dict[str, Any]]:
    """One dict per leaf awaiting review (trial, leaf, phase, effective_weight, status, why), by trial,
    then phase, then rubric order."""
    run = RunPaths(Path(run_dir).resolve())
    if not run.trials.is_dir():
        raise WorkbenchError(f"{run_dir}: no trials/ directory (not a run directory)")
    store = store or Store.for_run(run.root)
    required = reviewers_required(store, run.root.name)
    reviews = store.reviews_for(run.root.name) if required > 1 else None
    order = {p: i for i, p in enumerate(PHASES)}
    out = []
    for scores_path in sorted(run.trials.glob("*/scores.json")):
        scores = json.loads(scores_path.read_text())
        trial = scores_path.parent.name
        records = (ReviewRecord.from_frame(reviews[reviews["trial_id"] == trial])
                   if reviews is not None and not reviews.empty else [])
        waiting = [lf for lf in scores["leaves"] if lf["status"] in AWAITING]
        for lf in sorted(waiting, key=lambda lf: order.get(lf["phase"], len(order))):
            valid = {r.reviewer for r in records if r.leaf_id == lf["id"] and r.kind == "review"
                     and r.judged(scores.get("evidence_digest"), lf.get("evidence_digest"))}
            out.append({"trial": trial, "leaf": lf["id"], "phase": lf["phase"],
                        "effective_weight": lf["effective_weight"], "status": lf["status"],
                        "why": why(lf, len(valid), required)})
    return out
