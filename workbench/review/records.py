"""Review records: an expert's score for one leaf of one trial, appended to the run's results store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import WorkbenchError
from ..paths import TrialPaths
from ..store import Store


def record_review(trial_dir: Path | str, leaf_id: str, score: float, *, reviewer: str, comment: str = "",
                  kind: str = "review", store: Store | None = None) -> dict[str, Any]:
    tp = TrialPaths(Path(trial_dir))
    if not tp.scores.is_file():
        raise WorkbenchError(f"{tp.scores}: missing; score the trial before reviewing it")
    if not reviewer.strip():
        raise WorkbenchError("a review needs the reviewer's name")
    scores = json.loads(tp.scores.read_text())
    leaf = next((lf for lf in scores["leaves"] if lf["id"] == leaf_id), None)
    if leaf is None:
        raise WorkbenchError(f"{tp.scores}: no leaf {leaf_id!r}")
    if not 0.0 <= score <= 1.0:
        raise WorkbenchError(f"score {score} is outside [0, 1]")
    run_dir = tp.root.parent.parent
    store = store or Store.for_run(run_dir)
    review_id = store.add_review(run=run_dir.name, trial_id=tp.root.name, task=scores["task"], leaf_id=leaf_id,
                                 reviewer=reviewer.strip(), score=score, previous_score=leaf["score"],
                                 comment=comment, kind=kind)
    return {"review_id": review_id, "trial_id": tp.root.name, "previous_score": leaf["score"]}
