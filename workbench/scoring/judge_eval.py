"""`workbench judge-eval`: the judge's verdicts against expert review scores on the same leaves.

Pairs are (trial, leaf) where the judge produced a score and an expert reviewed the same leaf (the
latest review; an adjudication, when present, wins). The expert is the ground truth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..paths import RunPaths
from ..review.agreement import binarize, classification, cohen_kappa
from ..store import Store


def judge_scores(run: RunPaths) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    if not run.trials.is_dir():
        return out
    for d in sorted(run.trials.iterdir()):
        scores = d / "scores.json"
        if not scores.is_file():
            continue
        for lf in json.loads(scores.read_text())["leaves"]:
            mine = {**lf, **(lf.get("machine") or {})}  # the judge's own verdict, even where experts overrode it
            if lf.get("judge") and mine["score"] is not None and mine["status"] in ("scored", "missing_evidence"):
                out[(d.name, lf["id"])] = {"judge": mine["score"], "phase": lf["phase"], "reason": mine["rationale"]}
    return out


def expert_scores(store: Store, run: str) -> dict[tuple[str, str], dict[str, Any]]:
    df = store.reviews_for(run)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if df.empty:
        return out
    df = df.sort_values(["created_at", "review_id"])
    for row in df.itertuples():
        key = (row.trial_id, row.leaf_id)
        if key in out and out[key]["kind"] == "adjudication" and row.kind != "adjudication":
            continue
        out[key] = {"expert": row.score, "reviewer": row.reviewer, "kind": row.kind, "comment": row.comment}
    return out


def _metrics(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    truth, pred = binarize([p["expert"] for p in pairs]), binarize([p["judge"] for p in pairs])
    return {**classification(truth, pred), "kappa": cohen_kappa(truth, pred)}


def judge_eval(run_dir: Path | str) -> dict[str, Any]:
    run = RunPaths(Path(run_dir))
    judged, reviewed = judge_scores(run), expert_scores(Store.for_run(run.root), run.root.name)
    pairs = [{"trial": t, "leaf": lf, **judged[(t, lf)], **reviewed[(t, lf)]}
             for (t, lf) in sorted(set(judged) & set(reviewed))]
    phases = sorted({p["phase"] for p in pairs})
    return {
        "pairs": len(pairs), "judged_leaves": len(judged), "reviewed_leaves": len(reviewed),
        "overall": _metrics(pairs) if pairs else None,
        "by_phase": {ph: _metrics([p for p in pairs if p["phase"] == ph]) for ph in phases},
        "disagreements": [p for p in pairs if binarize([p["judge"]]) != binarize([p["expert"]])],
    }
