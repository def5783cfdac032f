"""Loading and validating rubric trees, and their exact effective weights.

Effective weight of a leaf = product of ``w / sum(sibling w)`` on the path from the root, so the
effective weights of all leaves sum to 1 and ``R = sum(w_i * s_i)``. A node's score is the
weighted mean of its children. Phase score = effective weight earned in that phase.

Weights are kept as exact fractions of the weights as written (``0.1`` is 1/10, not the nearest
float), so a boundary such as ``R > 0.9`` is decided exactly; :mod:`workbench.scoring.finalize` is
the one place R is computed from them.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

from pydantic import ValidationError

from ..errors import ValidationProblem, pydantic_problems
from .model import RubricNode
from .phases import PHASES, known_categories

FULL_THRESHOLD = Fraction(9, 10)


def exact(x: float | int | str | Fraction) -> Fraction:
    """A number as written, exactly: 0.1 is 1/10 (its shortest decimal form), never 0.1000000000000000055."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, float):
        return Fraction(repr(x))
    return Fraction(x)


@dataclass(frozen=True)
class Leaf:
    node: RubricNode
    path: str  # JSON path from the root, e.g. "sub_tasks[1].sub_tasks[0]"
    phase: str
    weight: Fraction  # exact effective weight
    gate_scope: tuple[str, ...] = ()  # a gate leaf: every leaf under its parent's other children

    @property
    def id(self) -> str:
        return self.node.id

    @property
    def effective_weight(self) -> float:
        return float(self.weight)


@dataclass
class Rubric:
    """A rubric tree (:func:`load_rubric` makes one): its leaves with exact effective weights.

    Args:
        root: the tree's root node.
        source: where it was read from (in problems and records).
    """

    root: RubricNode
    source: str = "rubric.json"

    @property
    def leaves(self) -> list[Leaf]:
        return _leaves(self.root)

    def phase_weights(self) -> dict[str, float]:
        leaves = self.leaves
        return {p: float(sum((lf.weight for lf in leaves if lf.phase == p), Fraction(0))) for p in PHASES}

    def stats(self) -> dict:
        """What `workbench rubric stats` shows: leaves and effective weight per phase, scoring methods, and
        the weight-0 (diagnostic) leaves, which are scored and shown but never move R."""
        leaves = self.leaves
        methods = Counter(lf.node.scoring_method for lf in leaves)
        return {
            "leaves": len(leaves),
            "phases": {p: round(w, 12) for p, w in self.phase_weights().items()},
            "weight_sum": round(math.fsum(lf.effective_weight for lf in leaves), 12),
            "phase_leaves": {p: sum(1 for lf in leaves if lf.phase == p) for p in PHASES},
            "methods": dict(sorted(methods.items())),
            "diagnostic_leaves": sum(1 for lf in leaves if lf.weight == 0),
        }


def _leaves(root: RubricNode) -> list[Leaf]:
    out: list[Leaf] = []

    def ids(node: RubricNode) -> list[str]:
        return [node.id] if node.is_leaf else [x for c in node.sub_tasks for x in ids(c)]

    def walk(node: RubricNode, path: str, w: Fraction, scope: tuple[str, ...]) -> None:
        if node.is_leaf:
            out.append(Leaf(node, path or "<root>", node.phase or "", w, scope if node.gate else ()))
            return
        total = sum((exact(c.weight) for c in node.sub_tasks), Fraction(0))
        under = [ids(c) for c in node.sub_tasks]
        for i, child in enumerate(node.sub_tasks):
            cw = w * exact(child.weight) / total if total > 0 else Fraction(0)
            others = tuple(x for j, group in enumerate(under) if j != i for x in group)
            walk(child, f"{path}.sub_tasks[{i}]" if path else f"sub_tasks[{i}]", cw, others)

    walk(root, "", Fraction(1), ())
    return _qualified(out)


def _qualified(leaves: list[Leaf]) -> list[Leaf]:
    """PaperBenchX's ``source_qualification_ids``: a leaf counts only when every leaf it names (a review of
    the native source its numbers come from) scores exactly 1, so each named leaf gates it as a gate leaf
    gates its siblings (a named leaf that is pending or withheld leaves it uncounted in R, counted in
    R_upper). Unknown ids are :func:`validate`'s problem."""
    extra: dict[str, list[str]] = {}
    for lf in leaves:
        for q in lf.node.source_qualification_ids or ():
            extra.setdefault(str(q), []).append(lf.id)
    if not extra:
        return leaves
    return [replace(lf, gate_scope=tuple(dict.fromkeys((*lf.gate_scope, *extra[lf.id]))))
            if lf.id in extra else lf for lf in leaves]


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
    for lf in _leaves(root) if not problems else ():
        unknown = [q for q in lf.node.source_qualification_ids or () if str(q) not in leaf_ids or str(q) == lf.id]
        if unknown:
            problems.append(f"{where(lf.path, lf.node)}: source_qualification_ids: {', '.join(map(str, unknown))} "
                            f"{'is' if len(unknown) == 1 else 'are'} not another leaf of this rubric")
    return problems or _points_problems(root, source)


POINTS_TOLERANCE = Fraction(5, 1000)  # of 100 points: effective_points written to two decimals


def _points_problems(root: RubricNode, source: str) -> list[str]:
    """PaperBenchX leaves may state their ``effective_points``: the leaf's share of the rubric's points (the
    root's children's weights, 100 in PaperBenchX). A statement the tree's weights do not give means the
    rubric does not say what its author meant, so it is refused rather than silently overruled."""
    declared = [lf for lf in _leaves(root) if lf.node.effective_points is not None]
    if not declared:
        return []
    total = sum((exact(c.weight) for c in root.sub_tasks), Fraction(0)) or Fraction(1)
    out = []
    for lf in declared:
        points = lf.weight * total
        if abs(exact(lf.node.effective_points) - points) > POINTS_TOLERANCE * total / 100:
            out.append(f"{source}: {lf.path} (id {lf.id}): effective_points: {lf.node.effective_points:g} declared, "
                       f"but its weights give {float(points):.4g} of {float(total):g} points")
    return out


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
    """A rubric file (PaperBench's JSON tree, with our phase and method fields), validated.

    Args:
        path: the rubric's JSON file.
        graded: read another tool's graded tree (PaperBench): stored scores allowed, our fields optional.

    Returns:
        The :class:`Rubric`: its tree, leaves and exact effective weights.

    Raises:
        ValidationProblem: the file is missing, not JSON, or not a valid rubric (every problem, each with the
            path of its node).
    """
    path = Path(path)
    if not path.is_file():
        raise ValidationProblem([f"{path}: file not found"])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationProblem([f"{path}: not valid JSON: {exc}"]) from None
    return parse_rubric(data, str(path), graded=graded)


def is_full(r: float | Fraction) -> bool:
    """Full reproduction: strictly above 0.9 (0.9 itself is not full), decided on the exact value; a
    missing R (NaN) is not full."""
    if isinstance(r, float) and not math.isfinite(r):
        return False
    return exact(r) > FULL_THRESHOLD


def graded_root_score(rubric: Rubric) -> float:
    """Root score of another tool's graded tree (PaperBench), from its leaves' stored ``score`` with
    the exact effective weights (internal nodes' stored scores are ignored)."""
    return float(sum((lf.weight * exact(lf.node.score or 0) for lf in rubric.leaves), Fraction(0)))
