"""Loading, validating and aggregating rubric trees.

Effective weight of a leaf = product of ``w / sum(sibling w)`` on the path from the root, so the
effective weights of all leaves sum to 1 and ``R = sum(w_i * s_i)``. A node's score is the
weighted mean of its children. Phase score = effective weight earned in that phase.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..errors import ValidationProblem, pydantic_problems
from .model import RubricNode
from .phases import PHASES, known_categories

FULL_THRESHOLD = 0.9


@dataclass(frozen=True)
class Leaf:
    node: RubricNode
    path: str  # JSON path from the root, e.g. "sub_tasks[1].sub_tasks[0]"
    phase: str
    effective_weight: float
    siblings: tuple[str, ...]  # ids of the other leaves under the same parent (for gates)

    @property
    def id(self) -> str:
        return self.node.id


@dataclass
class Rubric:
    root: RubricNode
    source: str = "rubric.json"

    @property
    def leaves(self) -> list[Leaf]:
        return _leaves(self.root)

    def leaf(self, leaf_id: str) -> Leaf:
        for lf in self.leaves:
            if lf.id == leaf_id:
                return lf
        raise KeyError(leaf_id)

    def phase_weights(self) -> dict[str, float]:
        return {p: math.fsum(lf.effective_weight for lf in self.leaves if lf.phase == p) for p in PHASES}

    def stats(self) -> dict:
        leaves = self.leaves
        return {
            "leaves": len(leaves),
            "phases": {p: round(w, 12) for p, w in self.phase_weights().items()},
            "weight_sum": round(math.fsum(lf.effective_weight for lf in leaves), 12),
        }


def _leaves(root: RubricNode) -> list[Leaf]:
    out: list[Leaf] = []

    def walk(node: RubricNode, path: str, w: float, siblings: tuple[str, ...]) -> None:
        if node.is_leaf:
            out.append(Leaf(node, path or "<root>", node.phase or "", w, siblings))
            return
        total = math.fsum(c.weight for c in node.sub_tasks)
        leaf_ids = tuple(c.id for c in node.sub_tasks if c.is_leaf)
        for i, child in enumerate(node.sub_tasks):
            cw = w * child.weight / total if total > 0 else 0.0
            others = tuple(x for x in leaf_ids if x != child.id)
            walk(child, f"{path}.sub_tasks[{i}]" if path else f"sub_tasks[{i}]", cw, others)

    walk(root, "", 1.0, ())
    return out


def validate(root: RubricNode, source: str, *, graded: bool = False) -> list[str]:
    """Problems a scorer cannot live with, each naming the file and the JSON path of the node."""
    problems: list[str] = []
    leaf_ids: dict[str, str] = {}

    def where(path: str, node: RubricNode) -> str:
        return f"{source}: {path or '<root>'} (id {node.id})"

    def walk(node: RubricNode, path: str) -> None:
        if node.is_leaf:
            if node.phase is None:
                got = "missing" if node.task_category is None else repr(node.task_category)
                problems.append(f"{where(path, node)}: task_category: unknown phase {got}; "
                                f"expected one of {known_categories()}")
            if node.id in leaf_ids:
                problems.append(f"{where(path, node)}: id: duplicate leaf id (also at {leaf_ids[node.id]})")
            leaf_ids[node.id] = path or "<root>"
            if node.method == "deterministic" and not node.check:
                problems.append(f"{where(path, node)}: check: method is deterministic but no check is given")
            if graded and node.score is None:
                problems.append(f"{where(path, node)}: score: a graded leaf needs a score")
            elif node.score is not None and not (0.0 <= node.score <= 1.0):
                problems.append(f"{where(path, node)}: score: {node.score} is outside [0, 1]")
            return
        if node.gate:
            problems.append(f"{where(path, node)}: gate: only leaves can gate their siblings")
        if math.fsum(c.weight for c in node.sub_tasks) <= 0:
            problems.append(f"{where(path, node)}: sub_tasks: weights of the children sum to 0")
        for i, child in enumerate(node.sub_tasks):
            walk(child, f"{path}.sub_tasks[{i}]" if path else f"sub_tasks[{i}]")

    walk(root, "")
    return problems


def parse_rubric(data: object, source: str = "rubric.json", *, graded: bool = False) -> Rubric:
    if not isinstance(data, dict):
        raise ValidationProblem([f"{source}: <root>: expected a JSON object (a rubric node)"])
    try:
        root = RubricNode.model_validate(data)
    except ValidationError as exc:
        raise ValidationProblem(pydantic_problems(source, exc)) from None
    problems = validate(root, source, graded=graded)
    if problems:
        raise ValidationProblem(problems)
    return Rubric(root, source)


def load_rubric(path: Path | str, *, graded: bool = False) -> Rubric:
    path = Path(path)
    if not path.is_file():
        raise ValidationProblem([f"{path}: file not found"])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationProblem([f"{path}: not valid JSON: {exc}"]) from None
    return parse_rubric(data, str(path), graded=graded)


def node_score(node: RubricNode, leaf_scores: dict[str, float]) -> float:
    """PaperBench aggregation: a node scores the weighted mean of its children."""
    if node.is_leaf:
        return leaf_scores.get(node.id, 0.0)
    total = math.fsum(c.weight for c in node.sub_tasks)
    if total <= 0:
        return 0.0
    return math.fsum(c.weight * node_score(c, leaf_scores) for c in node.sub_tasks) / total


def aggregate(rubric: Rubric, leaf_scores: dict[str, float]) -> dict:
    """R, phase scores and full for a set of leaf scores (absent leaves count 0)."""
    leaves = rubric.leaves
    r = math.fsum(lf.effective_weight * leaf_scores.get(lf.id, 0.0) for lf in leaves)
    phases = {
        p: math.fsum(lf.effective_weight * leaf_scores.get(lf.id, 0.0) for lf in leaves if lf.phase == p)
        for p in PHASES
    }
    return {"R": r, "phases": phases, "full": is_full(r)}


def is_full(r: float) -> bool:
    """Full reproduction: strictly above 0.9 (0.9 itself is not full)."""
    return r > FULL_THRESHOLD


def graded_root_score(rubric: Rubric) -> float:
    """Root score of a graded tree from its leaves' stored ``score`` (internal scores ignored)."""
    scores = {lf.id: float(lf.node.score or 0.0) for lf in rubric.leaves}
    return node_score(rubric.root, scores)
