"""`workbench judge-eval`: the judge's verdicts against expert review scores on the same leaves.

Pairs are (trial, leaf) where the judge produced a score and an expert reviewed the same leaf of the
same evidence (the latest such review; an adjudication, when present, wins). A review of other
evidence (a re-run trial) is stale and never paired. The expert is the ground truth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..paths import RunPaths, TrialPaths
from ..scoring.finalize import ReviewRecord
from ..scoring.results import read_scores
from ..store import Store
from .stats import binarize, classification, cohen_kappa


def judge_scores(run: RunPaths) -> dict[tuple[str, str], dict[str, Any]]:
    """(trial, leaf) -> the judge's own verdict (even where experts overrode it) and the evidence it judged."""
    out = {}
    if not run.trials.is_dir():
        return out
    for d in sorted(run.trials.iterdir()):
        found = read_scores(TrialPaths(d))
        if found is None:
            continue
        data = found.model_dump(mode="json")
        for lf in data["leaves"]:
            mine = {**lf, **(lf.get("machine") or {})}
            if lf.get("judge") and mine["score"] is not None and mine["status"] in ("scored", "missing_evidence"):
                out[(d.name, lf["id"])] = {"judge": mine["score"], "phase": lf["phase"], "reason": mine["rationale"],
                                           "evidence": (data.get("evidence_digest"), lf.get("evidence_digest"))}
    return out


def expert_scores(store: Store, run: str, judged: dict[tuple[str, str], dict[str, Any]] | None = None
                  ) -> dict[tuple[str, str], dict[str, Any]]:
    """(trial, leaf) -> the deciding expert record; with ``judged``, only records of the evidence the judge saw."""
    df = store.reviews_for(run)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if df.empty:
        return out
    df = df.sort_values(["created_at", "review_id"])
    for row, rec in zip(df.itertuples(), ReviewRecord.from_frame(df), strict=True):
        key = (row.trial_id, row.leaf_id)
        if judged is not None and (key not in judged or not rec.judged(*judged[key]["evidence"])):
            continue
        if key in out and out[key]["kind"] == "adjudication" and row.kind != "adjudication":
            continue
        out[key] = {"expert": row.score, "reviewer": row.reviewer, "kind": row.kind, "comment": row.comment}
    return out


def _metrics(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    truth, pred = binarize([p["expert"] for p in pairs]), binarize([p["judge"] for p in pairs])
    return {**classification(truth, pred), "kappa": cohen_kappa(truth, pred)}


def judge_eval(run_dir: Path | str, store: Store | None = None) -> dict[str, Any]:
    run = RunPaths(Path(run_dir))
    judged = judge_scores(run)
    reviewed = expert_scores(store or Store.for_run(run.root), run.root.name, judged)
    pairs = [{"trial": t, "leaf": lf, **{k: v for k, v in judged[(t, lf)].items() if k != "evidence"},
              **reviewed[(t, lf)]} for (t, lf) in sorted(set(judged) & set(reviewed))]
    phases = sorted({p["phase"] for p in pairs})
    return {
        "pairs": len(pairs), "judged_leaves": len(judged), "reviewed_leaves": len(reviewed),
        "overall": _metrics(pairs) if pairs else None,
        "by_phase": {ph: _metrics([p for p in pairs if p["phase"] == ph]) for ph in phases},
        "disagreements": [p for p in pairs if binarize([p["judge"]]) != binarize([p["expert"]])],
    }
