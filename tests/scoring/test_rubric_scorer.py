"""Scoring a trial: missing evidence zeroes only its leaves; pending and withheld are not zeros."""

from __future__ import annotations

import json

import pytest

from tests.conftest import MINI_RUBRIC, write_task
from workbench.replay.trial import replay_trial
from workbench.scoring import Scores, score_trial
from workbench.task import load_task

GOOD = 'mkdir -p results\necho \'{"value": 42}\' > results/value.json\necho ok > results/log.txt\n'


def _score(tmp_path, submission, script: str, **task_kw) -> Scores:
    task = load_task(write_task(tmp_path / "task", **task_kw))
    replay_trial(task, submission({"reproduce.sh": script}), tmp_path / "trial")
    return score_trial(task, tmp_path / "trial")


@pytest.mark.slow
def test_a_complete_delivery_scores_and_the_expert_leaf_waits(tmp_path, submission):
    s = _score(tmp_path, submission, GOOD)
    by = {lf.id: lf for lf in s.leaves}
    assert {k: v.status for k, v in by.items()} == {"m1": "scored", "e1": "scored", "v1": "scored",
                                                    "v2": "pending_review"}
    assert by["v2"].score is None
    assert s.R == pytest.approx(0.75) and s.coverage == pytest.approx(0.75)
    assert s.phases == pytest.approx({"modeling": 0.25, "execution": 0.25, "validation": 0.25})
    assert s.phase_weights == pytest.approx({"modeling": 0.25, "execution": 0.25, "validation": 0.5})
    assert not s.final and not s.full and not s.needs_rescoring
    on_disk = json.loads((tmp_path / "trial/scores.json").read_text())
    assert on_disk["R"] == s.R and len(on_disk["leaves"]) == 4
    assert set(on_disk["leaves"][0]) >= {"id", "phase", "effective_weight", "score", "status", "method",
                                         "rationale", "evidence_refs"}
    assert len(s.fingerprint["digest"]) == 64


@pytest.mark.slow
def test_missing_evidence_zeroes_only_the_leaves_that_need_it(tmp_path, submission):
    # writes the log the expert leaf needs, but not value.json
    s = _score(tmp_path, submission, "mkdir -p results; echo ok > results/log.txt\n")
    by = {lf.id: lf for lf in s.leaves}
    assert by["m1"].status == by["v1"].status == "missing_evidence"
    assert by["m1"].score == by["v1"].score == 0
    assert "results/value.json" in by["v1"].rationale
    assert by["e1"].score == 1  # the replay itself still succeeded
    assert by["v2"].status == "pending_review"  # its evidence exists
    # and the expert leaf is zero when its own evidence is missing
    s2 = _score(tmp_path / "2", submission, "mkdir -p results\n")
    assert {lf.id: lf.status for lf in s2.leaves}["v2"] == "missing_evidence"
    assert s2.final and s2.coverage == pytest.approx(1.0)


CHECKS = """from workbench.scoring import task_check
from workbench.scoring.faults import InfrastructureFault

@task_check
def broken(ev):
    return undefined_name

@task_check
def no_license(ev):
    raise InfrastructureFault("the licence server is down")

@task_check
def parse(ev):
    return float(ev.read_json("results/value.json")["value"]) == 42
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["broken", "no_license"])
def test_a_check_whose_own_code_or_environment_fails_is_withheld_not_zero(tmp_path, submission, name):
    rubric = json.loads(json.dumps(MINI_RUBRIC))
    rubric["sub_tasks"][0]["sub_tasks"][0]["check"] = {"kind": "task", "name": name}
    s = _score(tmp_path, submission, GOOD, rubric=rubric, checks_py=CHECKS)
    m1 = {lf.id: lf for lf in s.leaves}["m1"]
    assert m1.status == "withheld" and m1.score is None
    assert ("NameError" if name == "broken" else "licence server") in m1.error
    assert s.needs_rescoring and s.coverage == pytest.approx(0.5)
    assert s.R == pytest.approx(0.5)


@pytest.mark.slow
def test_a_check_that_chokes_on_what_the_submission_wrote_scores_zero_with_the_reason(tmp_path, submission):
    rubric = json.loads(json.dumps(MINI_RUBRIC))
    rubric["sub_tasks"][0]["sub_tasks"][0]["check"] = {"kind": "task", "name": "parse"}
    s = _score(tmp_path, submission, GOOD.replace("42", '"oops"'), rubric=rubric, checks_py=CHECKS)
    m1 = {lf.id: lf for lf in s.leaves}["m1"]
    assert (m1.status, m1.score) == ("scored", 0.0) and "could not convert string to float" in m1.rationale
    assert not s.needs_rescoring


@pytest.mark.slow
def test_a_failing_gate_zeroes_its_siblings(tmp_path, submission):
    rubric = {"id": "r", "sub_tasks": [
        {"id": "g", "weight": 1, "task_category": "Execution", "gate": True, "check": {"kind": "replay_succeeded"}},
        {"id": "a", "weight": 1, "task_category": "Validation",
         "check": {"kind": "file_exists", "path": "results/value.json"}},
        {"id": "other", "weight": 1, "sub_tasks": [
            {"id": "b", "weight": 1, "task_category": "Validation",
             "check": {"kind": "file_exists", "path": "results/value.json"}}]},
    ]}
    s = _score(tmp_path, submission, GOOD + "exit 1\n", rubric=rubric)
    by = {lf.id: lf for lf in s.leaves}
    assert by["g"].score == 0
    assert by["a"].status == "gated" and by["a"].score == 0 and "gated: g scored 0" in by["a"].rationale
    assert by["a"].machine["score"] == 1.0  # kept, so a review of the gate restores it
    assert by["b"].status == "gated"  # a gate reaches its sibling subtrees, not only sibling leaves
    ok = _score(tmp_path / "2", submission, GOOD, rubric=rubric)
    assert ok.R == pytest.approx(1.0) and ok.full


@pytest.mark.slow
def test_partly_missing_evidence_without_a_judge_waits_for_review_not_zero(tmp_path, submission):
    rubric = json.loads(json.dumps(MINI_RUBRIC))
    rubric["sub_tasks"][2]["sub_tasks"][1]["evidence_inputs"].append({"path": "submission/results/plot.png"})
    s = _score(tmp_path, submission, GOOD, rubric=rubric)  # log.txt is there, plot.png is not
    v2 = {lf.id: lf for lf in s.leaves}["v2"]
    assert v2.status == "pending_review" and v2.score is None and "missing: submission/results/plot.png" in v2.rationale


@pytest.mark.slow
def test_only_leaves_rescores_everything_when_a_scoring_input_changed(tmp_path, submission):
    s = _score(tmp_path, submission, GOOD)
    assert {lf.id: lf.score for lf in s.leaves}["v1"] == 1.0
    task = load_task(tmp_path / "task")
    rubric = json.loads(task.paths.rubric.read_text())
    rubric["sub_tasks"][2]["sub_tasks"][0]["check"]["target"] = 7  # v1 now fails
    task.paths.rubric.write_text(json.dumps(rubric))
    again = score_trial(load_task(tmp_path / "task"), tmp_path / "trial", only_leaves={"v2"})
    assert {lf.id: lf.score for lf in again.leaves}["v1"] == 0.0  # not copied from the stale scoring
    assert again.fingerprint["scoring_inputs"] != s.fingerprint["scoring_inputs"]


@pytest.mark.parametrize("mode", ["rubric", "qa"])
def test_the_fingerprint_covers_every_file_of_tests_in_every_mode(tmp_path, mode):
    from tests.scoring.modes import write_qa_task
    from workbench.scoring.trial import fingerprint

    root = write_task(tmp_path / "t") if mode == "rubric" else write_qa_task(tmp_path / "t", {"m1": "A"})
    before = fingerprint(load_task(root), "e")
    for rel in ("checks.py", "judge.md", "refs/a/b.json"):
        (root / "tests" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "tests" / rel).write_text("changed\n")
        after = fingerprint(load_task(root), "e")
        assert after["digest"] != before["digest"], rel
        before = after
    (root / "tests" / "validation.json").write_text("{}")  # a construction record is not a scoring input
    assert fingerprint(load_task(root), "e")["digest"] == before["digest"]


@pytest.mark.slow
def test_score_applies_the_reviews_of_the_store_named_by_db(tmp_path, submission):
    from tests.conftest import run_cli
    from workbench.review import record_review
    from workbench.store import Store

    task = load_task(write_task(tmp_path / "task"))
    trial = tmp_path / "run" / "trials" / "t1"
    replay_trial(task, submission({"reproduce.sh": GOOD}), trial)
    score_trial(task, trial)
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    record_review(trial, "v2", 1.0, reviewer="Ada", store=Store(url))
    (tmp_path / "run" / "results.db").unlink(missing_ok=True)
    proc = run_cli("score", str(task.root), "--trial", str(trial), "--db", url, "--json")
    assert proc.returncode == 0, proc.stderr
    assert {lf["id"]: lf["status"] for lf in json.loads(proc.stdout)["leaves"]}["v2"] == "reviewed"
