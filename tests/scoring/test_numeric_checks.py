"""PaperBenchX's rubric fields load, and its deterministic_metric leaves' numeric_checks are scored as
deterministic checks on a metrics file, with PaperBenchX's operators (is_true, equals, finite, leq, abs_leq,
range)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from workbench.evidence import Evidence
from workbench.rubric import parse_rubric
from workbench.scoring import run_check
from workbench.scoring.checks import CheckSpecError

PBX_RUBRIC = {"id": "root", "weight_semantics": "relative", "requirements": "r", "sub_tasks": [
    {"id": "n1", "weight": 3, "task_category": "Validation", "scoring_type": "deterministic_metric",
     "metric_operation": "power", "research_block_id": "B1", "source_qualification_ids": ["s1"],
     "evidence_gates": ["native_log"], "requirements": "power balance within 1e-3",
     "numeric_checks": [{"path": "balance", "operator": "abs_leq", "upper": 1e-3},
                        {"path": "converged", "operator": "is_true"}]},
    {"id": "s1", "weight": 1, "task_category": "Execution", "scoring_type": "llm_binary",
     "requirements": "the solver's native log is the source of the arrays"}]}


def test_a_paperbenchx_rubric_with_its_fields_loads_and_its_metric_leaf_is_deterministic(tmp_path):
    rubric = parse_rubric(PBX_RUBRIC, "rubric.json")
    by = {lf.id: lf for lf in rubric.leaves}
    assert by["n1"].node.scoring_method == "deterministic" and by["s1"].node.scoring_method == "judge"
    assert by["n1"].node.check == {"kind": "numeric_checks", "path": "submission/results/metrics.json",
                                   "key": "power", "checks": PBX_RUBRIC["sub_tasks"][0]["numeric_checks"]}
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(PBX_RUBRIC))
    stats = run_cli("rubric", "stats", str(path), "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["leaves"] == 2


CASES = [  # operator, condition, a value that passes, a value that fails
    ("is_true", {}, True, 1),
    ("equals", {"expected": "TE"}, "TE", "TM"),
    ("finite", {}, [1.0, 2.0], [1.0, float("inf")]),
    ("leq", {"upper": 0.5}, [0.1, 0.5], [0.1, 0.6]),
    ("abs_leq", {"upper": 1e-3}, -5e-4, -2e-3),
    ("range", {"lower": 1.0, "upper": 2.0}, [[1.0, 1.5], [2.0]], [1.5, 2.5]),
]


@pytest.mark.parametrize("operator,condition,good,bad", CASES, ids=[c[0] for c in CASES])
def test_each_operator_passes_and_fails_on_a_metrics_file(tmp_path, operator, condition, good, bad):
    spec = {"kind": "numeric_checks", "path": "submission/results/metrics.json", "key": "power",
            "checks": [{"path": "x.value", "operator": operator, **condition}]}
    results = tmp_path / "submission" / "results"
    results.mkdir(parents=True)
    for value, want in ((good, 1.0), (bad, 0.0)):
        (results / "metrics.json").write_text(json.dumps({"power": {"x": {"value": value}}}))
        out = run_check(spec, Evidence(tmp_path), {})
        assert out.score == want, (operator, value, out.rationale)
    (results / "metrics.json").write_text(json.dumps({"power": {"x": {}}}))
    assert run_check(spec, Evidence(tmp_path), {}).rationale.endswith("x.value: absent")


def test_a_boolean_is_not_a_number_and_a_condition_without_its_bound_is_the_rubrics_fault(tmp_path):
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "m.json").write_text('{"v": true}')
    spec = {"kind": "numeric_checks", "path": "submission/m.json", "checks": [{"path": "v", "operator": "finite"}]}
    assert run_check(spec, Evidence(tmp_path), {}).score == 0.0
    with pytest.raises(CheckSpecError, match="leq needs upper"):
        run_check({**spec, "checks": [{"path": "v", "operator": "leq"}]}, Evidence(tmp_path), {})


def test_a_source_qualification_that_fails_zeroes_the_numeric_leaf_it_qualifies():
    """PaperBenchX's graders score a leaf with source_qualification_ids 0 unless every named leaf scored 1
    (the numbers must come from the native source a reviewer qualified); pending qualification: uncounted."""
    from fractions import Fraction

    from tests.scoring.test_finalize import machine
    from workbench.scoring.finalize import finalize

    rubric = parse_rubric(PBX_RUBRIC, "rubric.json")
    assert {lf.id: lf.gate_scope for lf in rubric.leaves} == {"n1": (), "s1": ("n1",)}
    _, passed = finalize(machine(rubric, {"n1": ("scored", 1.0), "s1": ("scored", 1.0)}), [])
    assert passed["exact"]["R"] == "1"
    leaves, failed = finalize(machine(rubric, {"n1": ("scored", 1.0), "s1": ("scored", 0.0)}), [])
    n1 = next(lf for lf in leaves if lf.id == "n1")
    assert failed["exact"]["R"] == "0" and n1.status == "gated" and n1.gated_by == ["s1"]
    _, pending = finalize(machine(rubric, {"n1": ("scored", 1.0), "s1": ("pending_review", None)}), [])
    assert Fraction(pending["exact"]["R"]) == 0 and Fraction(pending["exact"]["R_upper"]) == 1
    bad = json.loads(json.dumps(PBX_RUBRIC))
    bad["sub_tasks"][0]["source_qualification_ids"] = ["s9"]
    with pytest.raises(Exception, match=r"source_qualification_ids: s9 is not another leaf of this rubric"):
        parse_rubric(bad, "rubric.json")


def test_paperbenchx_criterion_text_and_hybrid_checks_load_as_its_graders_read_them():
    """Its graders take the criterion from description, then requirements, then title or name; a check with
    a mode (``fail_only``) and a ``manual`` is theirs, not one of our check kinds: kept, manual to the judge."""
    rubric = parse_rubric({"id": "root", "weight": 100, "sub_tasks": [
        {"id": "A", "weight": 60, "task_category": "Modeling", "description": "the lattice constant is 0.5 um"},
        {"id": "B", "weight": 40, "task_category": "Execution", "name": "solver ran",
         "check": {"mode": "fail_only", "manual": "read the native log"}}]}, "rubric.json")
    a, b = rubric.leaves
    assert a.node.requirements == "the lattice constant is 0.5 um" and b.node.requirements == "solver ran"
    assert b.node.check is None and b.node.scoring_method == "judge" and b.node.judge_notes == "read the native log"
    assert b.node.hybrid_check == {"mode": "fail_only", "manual": "read the native log"}
