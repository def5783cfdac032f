"""PaperBench's grader output: the graded task tree (``GradedTaskNode.to_dict``), one JSON file per trial.

Our rubric is a PaperBench TaskNode tree already; the export puts each leaf's final score from scores.json
on it and gives every internal node the weighted mean of its children (PaperBench's aggregation), so the
root's score is the trial's R. A leaf that does not count toward R (pending, withheld, disputed) is written
with score 0 and ``valid_score`` false, as R counts it. Categories are PaperBench's names for our phases.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..errors import WorkbenchError
from ..io import atomic_write_json
from ..paths import TrialPaths
from ..rubric import load_rubric
from ..rubric.model import RubricNode
from ..scoring.results import COUNTED, LeafScore, read_scores
from ..trial.record import read_trial
from . import trial_dirs

CATEGORY = {"modeling": "Code Development", "execution": "Code Execution", "validation": "Result Analysis"}
AGGREGATED = "Aggregated score from sub-tasks."


class GradedTaskNode(BaseModel):
    """One node of a PaperBench graded task tree, with exactly the keys its ``to_dict`` writes."""

    id: str
    requirements: str
    weight: int | float
    score: float
    valid_score: bool
    task_category: str | None
    explanation: str
    judge_metadata: dict[str, Any] | None
    sub_tasks: list[GradedTaskNode]


def _weight(w: float) -> int | float:
    return int(w) if float(w).is_integer() else w  # PaperBench's rubrics write integer weights


def _graded(node: RubricNode, leaves: dict[str, LeafScore]) -> GradedTaskNode:
    if node.is_leaf:
        lf = leaves[node.id]
        counted = lf.status in COUNTED and lf.score is not None
        return GradedTaskNode(
            id=node.id, requirements=node.requirements, weight=_weight(node.weight),
            score=float(lf.score) if counted else 0.0, valid_score=counted,
            task_category=CATEGORY.get(lf.phase, node.task_category), explanation=lf.rationale or lf.status,
            judge_metadata={"workbench": {"status": lf.status, "method": lf.method, "phase": lf.phase,
                                          "effective_weight": lf.weight or lf.effective_weight,
                                          "evidence_refs": lf.evidence_refs}},
            sub_tasks=[])
    kids = [_graded(c, leaves) for c in node.sub_tasks]
    total = math.fsum(k.weight for k in kids)
    score = math.fsum(k.score * k.weight for k in kids) / total if total else 0.0
    return GradedTaskNode(id=node.id, requirements=node.requirements, weight=_weight(node.weight), score=score,
                          valid_score=True, task_category=None, explanation=AGGREGATED, judge_metadata=None,
                          sub_tasks=kids)


def graded_tree(trial_dir: Path) -> GradedTaskNode:
    """The trial's rubric with its final leaf scores. The rubric is read from the task package the trial
    ran; it must still have the leaves (and effective weights) that were scored."""
    tp = TrialPaths(Path(trial_dir))
    scores = read_scores(tp)
    if scores is None:
        raise WorkbenchError(f"{tp.root}: not scored (no scores.json)")
    rec = read_trial(tp)
    if scores.scoring != "rubric" or rec is None or not rec.task_dir:
        raise WorkbenchError(f"{tp.root}: scored by {scores.scoring}, not by a rubric tree of a known task package")
    rubric = load_rubric(Path(rec.task_dir) / "tests" / "rubric.json")
    ours = {lf.id: lf for lf in scores.leaves}
    theirs = {lf.id: lf.effective_weight for lf in rubric.leaves}
    if set(theirs) != set(ours) or any(abs(theirs[k] - ours[k].effective_weight) > 1e-12 for k in ours):
        raise WorkbenchError(f"{rubric.source}: the rubric changed since {tp.root.name} was scored "
                             "(its leaves or their weights differ from scores.json); re-score it first")
    return _graded(rubric.root, ours)


def export_paperbench(path: Path, out: Path) -> list[Path]:
    """One ``<trial-id>.json`` graded task tree per scored trial of a trial or run directory."""
    written = []
    for trial in trial_dirs(path):
        if not TrialPaths(trial).scores.is_file() and trial != Path(path):
            continue  # an unscored trial of a run (infra_error): nothing was graded
        target = Path(out) / f"{trial.name}.json"
        atomic_write_json(target, graded_tree(trial).model_dump(mode="json"))
        written.append(target)
    return written
