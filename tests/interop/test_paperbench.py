"""`workbench export paperbench`: graded task trees in PaperBench's grader-output format whose root is R.

PaperBench is not on PyPI, so its code cannot run here. The checker below is PaperBench's aggregation rule
as its grading code states it (``score_from_children`` in paperbench/judge/graded_task_node.py of
openai/preparedness: a node's score is the weighted mean of its children's, 0 when their weights sum to 0;
leaves keep their grade), written anew, not copied. That it is PaperBench's rule is shown on PaperBench's
own graded trees (tests/fixtures/external/paperbench/graded): it reproduces every internal score they record.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import EXTERNAL, MATRIX, run_cli, write_task
from workbench.paths import RunPaths
from workbench.rubric import graded_root_score, parse_rubric
from workbench.scoring import Scores

GRADED = sorted((EXTERNAL / "paperbench" / "graded").glob("*.json"))
CATEGORIES = {"Code Development", "Code Execution", "Result Analysis"}
# a failing gate zeroes its sibling's leaf (which passed its own check); the other subtree still earns its half
GATED = {"id": "root", "requirements": "gated", "sub_tasks": [
    {"id": "s1", "weight": 1, "requirements": "first", "sub_tasks": [
        {"id": "g", "weight": 1, "task_category": "Execution", "requirements": "gate", "gate": True,
         "check": {"kind": "file_exists", "path": "results/missing.json"}},
        {"id": "x", "weight": 1, "task_category": "Validation", "requirements": "value file",
         "check": {"kind": "file_exists", "path": "results/value.json"}}]},
    {"id": "s2", "weight": 1, "requirements": "second", "sub_tasks": [
        {"id": "m1", "weight": 1, "task_category": "Modeling", "requirements": "value file",
         "check": {"kind": "file_exists", "path": "results/value.json"}}]}]}


def aggregate(node: dict) -> float:
    """PaperBench's rule, bottom-up from the leaves' grades."""
    if not node["sub_tasks"]:
        return node["score"]
    scores = [aggregate(c) for c in node["sub_tasks"]]
    total = sum(c["weight"] for c in node["sub_tasks"])
    return 0.0 if total == 0 else sum(s * c["weight"] for s, c in zip(scores, node["sub_tasks"], strict=True)) / total


def nodes(node: dict):
    yield node
    for c in node["sub_tasks"]:
        yield from nodes(c)


def test_the_checker_reproduces_every_score_in_paperbenchs_own_graded_trees():
    assert len(GRADED) == 5
    checked = 0
    for path in GRADED:
        tree = json.loads(path.read_text())
        for n in nodes(tree):
            if n["sub_tasks"]:
                assert aggregate(n) == n["score"], f"{path.name}: {n['id']}"  # exactly, float for float
                checked += 1
    assert checked > 100


@pytest.fixture(scope="module")
def exported(small_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("paperbench")
    proc = run_cli("export", "paperbench", str(small_run), "--out", str(out))
    assert proc.returncode == 0 and f"wrote 6 graded task trees to {out}" in proc.stdout, proc.stderr
    return small_run, out


def test_each_trials_tree_has_paperbenchs_shape_and_its_root_is_R(exported):
    run, out = exported
    keys = set(json.loads(GRADED[0].read_text()))  # the keys PaperBench writes on every node
    for path in sorted(out.glob("*.json")):
        tree = json.loads(path.read_text())
        ours = Scores.model_validate_json(RunPaths(run).trial(path.stem).scores.read_text())
        assert tree["score"] == pytest.approx(ours.R, abs=1e-12)
        assert aggregate(tree) == pytest.approx(ours.R, abs=1e-12)
        for n in nodes(tree):
            assert set(n) == keys
            if n["sub_tasks"]:
                assert n["score"] == aggregate(n)
            else:
                assert n["task_category"] in CATEGORIES
        # our own reader takes it back as another tool's graded tree, to the same R
        assert graded_root_score(parse_rubric(tree, path.name, graded=True)) == pytest.approx(ours.R, abs=1e-12)


def test_a_leaf_still_awaiting_an_expert_counts_zero_and_is_marked_invalid(exported):
    _, out = exported
    tree = json.loads((out / "mini__oracle__1.json").read_text())
    leaves = {n["id"]: n for n in nodes(tree) if not n["sub_tasks"]}
    assert leaves["v2"]["score"] == 0.0 and leaves["v2"]["valid_score"] is False
    assert leaves["v2"]["judge_metadata"]["workbench"]["status"] == "pending_review"
    assert leaves["v1"]["score"] == 1.0 and leaves["v1"]["valid_score"] is True
    assert tree["score"] == 0.75


def test_one_trial_exports_one_tree_and_a_wrong_path_is_one_line(small_run, tmp_path):
    trial = RunPaths(small_run).trial("mini__nop__1").root
    proc = run_cli("export", "paperbench", str(trial), "--out", str(tmp_path / "one"))
    assert proc.returncode == 0 and [p.name for p in (tmp_path / "one").iterdir()] == ["mini__nop__1.json"]
    proc = run_cli("export", "paperbench", str(tmp_path / "nope"), "--out", str(tmp_path / "x"))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")


@pytest.mark.slow
def test_a_gated_leaf_is_zero_in_the_tree_as_in_R(tmp_path):
    from workbench.batch.run import run_batch

    task = write_task(tmp_path / "gated", rubric=GATED)
    (tmp_path / "m.toml").write_text(MATRIX.format(task=task, attempts=1))
    run_batch(tmp_path / "m.toml", tmp_path / "run", engine="inline", workers=1, progress=False)
    proc = run_cli("export", "paperbench", str(tmp_path / "run" / "trials" / "gated__oracle__1"),
                   "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    tree = json.loads((tmp_path / "out" / "gated__oracle__1.json").read_text())
    leaves = {n["id"]: n for n in nodes(tree) if not n["sub_tasks"]}
    assert leaves["x"]["score"] == 0.0 and leaves["x"]["judge_metadata"]["workbench"]["status"] == "gated"
    assert tree["score"] == aggregate(tree) == 0.5
    assert Scores.model_validate_json((tmp_path / "run/trials/gated__oracle__1/scores.json").read_text()).R == 0.5
