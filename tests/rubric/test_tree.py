import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from tests.conftest import EXTERNAL
from workbench.errors import ValidationProblem
from workbench.rubric import graded_root_score, is_full, load_rubric, parse_rubric, phase_of

EXTERNAL_RUBRICS = sorted(p for p in EXTERNAL.rglob("*.json") if "rubric" in p.name or "graded" in p.parts
                          or "rubrics" in p.parts)
GRADED = sorted((EXTERNAL / "paperbench" / "graded").glob("*.json"))


def leaf(id, cat="Modeling", w=1, **kw):
    return {"id": id, "requirements": id, "weight": w, "task_category": cat, "sub_tasks": [], **kw}


def test_the_external_files_are_there():
    assert len(GRADED) == 5
    assert len(EXTERNAL_RUBRICS) >= 15


@pytest.mark.parametrize("path", EXTERNAL_RUBRICS, ids=lambda p: p.relative_to(EXTERNAL).as_posix())
def test_every_external_rubric_loads_with_effective_weights_summing_to_one(path):
    rubric = load_rubric(path)
    stats = rubric.stats()
    assert stats["leaves"] == len(rubric.leaves) > 0
    assert stats["weight_sum"] == pytest.approx(1.0, abs=1e-9)
    assert math.fsum(stats["phases"].values()) == pytest.approx(1.0, abs=1e-9)
    assert all(lf.phase in ("modeling", "execution", "validation") for lf in rubric.leaves)


@pytest.mark.parametrize("path", GRADED, ids=lambda p: p.stem)
def test_human_graded_paperbench_trees_reproduce_their_stored_root_score(path):
    rubric = load_rubric(path, graded=True)
    stored = json.loads(path.read_text())["score"]
    assert graded_root_score(rubric) == pytest.approx(stored, abs=1e-6)


def test_effective_weight_is_the_product_of_sibling_shares():
    rubric = parse_rubric({"id": "r", "sub_tasks": [
        {"id": "a", "weight": 1, "sub_tasks": [leaf("a1", w=1), leaf("a2", "Execution", w=3)]},
        {"id": "b", "weight": 3, "sub_tasks": [leaf("b1", "Validation")]},
    ]})
    w = {lf.id: lf.effective_weight for lf in rubric.leaves}
    assert w == pytest.approx({"a1": 0.25 * 0.25, "a2": 0.25 * 0.75, "b1": 0.75})
    assert rubric.stats() == {"leaves": 3, "phases": {"modeling": 0.0625, "execution": 0.1875, "validation": 0.75},
                              "weight_sum": 1.0, "phase_leaves": {"modeling": 1, "execution": 1, "validation": 1},
                              "methods": {"judge": 3}, "diagnostic_leaves": 0}
    assert {lf.id: lf.weight for lf in rubric.leaves} == {"a1": Fraction(1, 16), "a2": Fraction(3, 16),
                                                         "b1": Fraction(3, 4)}


def test_weights_are_exact_fractions_of_the_weights_as_written():
    rubric = parse_rubric({"id": "r", "sub_tasks": [leaf("a", w=0.1), leaf("b", w=0.2), leaf("c", w=0.4),
                                                    leaf("d", w=0.3)]})
    w = [lf.weight for lf in rubric.leaves]
    assert w == [Fraction(1, 10), Fraction(1, 5), Fraction(2, 5), Fraction(3, 10)]
    passed = [lf.effective_weight for lf in rubric.leaves[1:]]
    assert sum(passed) > 0.9 and not is_full(sum(w[1:]))  # summed floats would call exactly 0.9 full


def test_a_gate_reaches_every_leaf_of_its_sibling_subtrees():
    rubric = parse_rubric({"id": "r", "sub_tasks": [
        leaf("g", gate=True),
        {"id": "s", "sub_tasks": [leaf("s1"), {"id": "t", "sub_tasks": [leaf("t1"), leaf("t2")]}]},
        leaf("x")]})
    scope = {lf.id: lf.gate_scope for lf in rubric.leaves}
    assert scope["g"] == ("s1", "t1", "t2", "x") and scope["s1"] == ()


def test_weight_zero_leaves_are_kept_but_weigh_nothing():
    rubric = parse_rubric({"id": "r", "sub_tasks": [leaf("a"), leaf("diag", "Validation", w=0)]})
    assert [lf.effective_weight for lf in rubric.leaves] == [1.0, 0.0]


@pytest.mark.parametrize("category,phase", [
    ("Modeling", "modeling"), ("Execution", "execution"), ("Validation", "validation"),
    ("Code Development", "modeling"), ("Code Execution", "execution"), ("Result Analysis", "validation"),
    ("code_execution", "execution"), ("Bogus", None), (None, None)])
def test_paperbench_and_paperbenchx_categories_map_to_three_phases(category, phase):
    assert phase_of(category) == phase


def test_full_needs_strictly_more_than_ninety_percent():
    assert not is_full(0.9)
    assert is_full(0.9 + 1e-9)
    assert not is_full(0.0)


def _problems(data, **kw) -> str:
    with pytest.raises(ValidationProblem) as exc:
        parse_rubric(data, "tests/rubric.json", **kw)
    return "\n".join(exc.value.problems)


def test_children_weights_summing_to_zero_are_rejected_with_the_node_named():
    msg = _problems({"id": "r", "sub_tasks": [{"id": "g", "weight": 1, "sub_tasks": [leaf("a", w=0), leaf("b", w=0)]}]})
    assert "tests/rubric.json: sub_tasks[0] (id g): sub_tasks: weights of the children sum to 0" in msg


def test_unknown_phase_is_rejected_naming_the_field_and_value():
    msg = _problems({"id": "r", "sub_tasks": [leaf("a", "Astrology")]})
    assert "sub_tasks[0] (id a): task_category: unknown phase 'Astrology'" in msg
    assert "Modeling" in msg


def test_leaf_without_category_negative_weight_and_duplicates_are_named():
    msg = _problems({"id": "r", "sub_tasks": [{"id": "x", "requirements": "", "sub_tasks": []}, leaf("y"), leaf("y")]})
    assert "(id x): task_category: unknown phase missing" in msg
    assert "duplicate leaf id" in msg
    msg = _problems({"id": "r", "sub_tasks": [leaf("a", w=-1)]})
    assert "tests/rubric.json: sub_tasks.0.weight" in msg


def test_graded_leaf_needs_a_score_in_range():
    assert "score: a graded leaf needs a score" in _problems({"id": "r", "sub_tasks": [leaf("a")]}, graded=True)
    assert "outside [0, 1]" in _problems({"id": "r", "sub_tasks": [leaf("a", score=1.5)]})


def test_malformed_and_missing_files_are_clear_errors(tmp_path: Path):
    bad = tmp_path / "rubric.json"
    bad.write_text("{not json")
    with pytest.raises(ValidationProblem, match="rubric.json: not valid JSON"):
        load_rubric(bad)
    with pytest.raises(ValidationProblem, match="file not found"):
        load_rubric(tmp_path / "nope.json")
    bad.write_text("[1, 2]")
    with pytest.raises(ValidationProblem, match="expected a JSON object"):
        load_rubric(bad)


def test_declared_effective_points_must_be_what_the_weights_give():
    """PaperBenchX leaves may state their points (of the root's 100): a statement the tree contradicts is
    refused, naming the leaf, rather than silently overruled by the weights."""
    def tree(points_b1):
        return {"id": "r", "sub_tasks": [
            {"id": "A", "weight": 20, "sub_tasks": [leaf("a1", effective_points=5), leaf("a2", w=3,
                                                                                        effective_points=15)]},
            {"id": "B", "weight": 80, "sub_tasks": [leaf("b1", "Validation", effective_points=points_b1)]}]}

    assert [lf.weight for lf in parse_rubric(tree(80)).leaves] == [Fraction(1, 20), Fraction(3, 20), Fraction(4, 5)]
    parse_rubric(tree(80.004))  # written to two decimals
    with pytest.raises(ValidationProblem) as exc:
        parse_rubric(tree(60), "t/rubric.json")
    assert exc.value.problems == ["t/rubric.json: sub_tasks[1].sub_tasks[0] (id b1): effective_points: 60 declared, "
                                  "but its weights give 80 of 100 points"]
