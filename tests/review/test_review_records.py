import json

import pytest

from tests.review.conftest import ORACLE_R, SIXTH, leaves, trial
from workbench.errors import WorkbenchError
from workbench.review import disputes, record_review, set_reviewers_required
from workbench.scoring import score_trial
from workbench.store import Store
from workbench.task import load_task


def test_an_expert_review_decides_a_pending_leaf_and_R_is_recomputed_everywhere(review_run):
    t = trial(review_run)
    assert leaves(t)["v2"]["status"] == "pending_review"
    out = record_review(t, "v2", 1.0, reviewer="Ada", comment="log reads fine")
    assert out["leaf_status"] == "reviewed" and out["R_before"] == pytest.approx(ORACLE_R)
    assert out["R"] == pytest.approx(ORACLE_R + SIXTH)
    v2 = leaves(t)["v2"]
    assert v2["score"] == 1.0 and v2["machine"]["status"] == "pending_review" and "Ada" in v2["rationale"]
    scores = json.loads((t / "scores.json").read_text())
    outcome = json.loads((t / "trial.json").read_text())["outcome"]
    assert outcome["R"] == pytest.approx(scores["R"]) and outcome["awaiting_review"] == 1  # v3 still waits
    row = Store.for_run(review_run).frame().set_index("trial_id").loc["mini__oracle__1"]
    assert row.R == pytest.approx(ORACLE_R + SIXTH)


def test_expert_outranks_a_check_and_records_are_append_only(review_run):
    t = trial(review_run)
    record_review(t, "v1", 0.0, reviewer="Ada", comment="42 came from a hard-coded constant")
    assert leaves(t)["v1"]["score"] == 0.0 and leaves(t)["v1"]["machine"]["score"] == 1.0
    record_review(t, "v1", 1.0, reviewer="Ada", comment="on second look it is computed")
    store = Store.for_run(review_run)
    recs = store.reviews_for("run", "mini__oracle__1")
    assert list(recs.score) == [0.0, 1.0] and list(recs.previous_score) == [1.0, 0.0]  # both kept, in order
    assert leaves(t)["v1"]["score"] == 1.0  # the latest review of a reviewer counts


def test_rescoring_a_trial_keeps_the_expert_decisions(review_run):
    t = trial(review_run)
    record_review(t, "v2", 1.0, reviewer="Ada")
    task = load_task(json.loads((t / "trial.json").read_text())["task_dir"])
    s = score_trial(task, t)
    assert {lf.id: lf.status for lf in s.leaves}["v2"] == "reviewed" and s.R == pytest.approx(ORACLE_R + SIXTH)


def test_two_reviewers_disagree_then_an_adjudication_decides(review_run):
    t = trial(review_run)
    set_reviewers_required(review_run, 2)
    first = record_review(t, "v2", 1.0, reviewer="Ada")
    assert first["leaf_status"] == "pending_review"  # one reviewer of two: nothing decided yet
    second = record_review(t, "v2", 0.0, reviewer="Grace", comment="log is empty of numbers")
    assert second["leaf_status"] == "disputed" and second["leaf_score"] is None
    scores = json.loads((t / "scores.json").read_text())
    assert scores["coverage"] == pytest.approx(1 - 2 * SIXTH) and not scores["final"]
    queue = disputes(Store.for_run(review_run), "run")
    assert list(queue.leaf_id) == ["v2"] and "Ada: 1" in queue.reviews[0] and "Grace: 0" in queue.reviews[0]
    third = record_review(t, "v2", 1.0, reviewer="Lin", kind="adjudication", comment="numbers are in value.json")
    assert third["leaf_status"] == "adjudicated" and third["R"] == pytest.approx(ORACLE_R + SIXTH)
    assert disputes(Store.for_run(review_run), "run").empty
    # lowering the requirement re-decides at once: Ada and Grace no longer need to agree, but the adjudication stands
    set_reviewers_required(review_run, 1)
    assert leaves(t)["v2"]["status"] == "adjudicated"


def test_continuous_leaves_agree_within_a_tolerance_and_average(review_run):
    t = trial(review_run)
    set_reviewers_required(review_run, 2)
    record_review(t, "v3", 0.7, reviewer="Ada")
    out = record_review(t, "v3", 0.8, reviewer="Grace")
    assert out["leaf_status"] == "reviewed" and out["leaf_score"] == pytest.approx(0.75)
    out = record_review(t, "v3", 0.2, reviewer="Grace")
    assert out["leaf_status"] == "disputed"


@pytest.mark.parametrize("args, message", [
    (("v2", 0.5), "must be 0 or 1"),
    (("v3", 1.5), "outside [0, 1]"),
    (("nope", 1.0), "no leaf 'nope'"),
])
def test_bad_reviews_are_refused_and_leave_no_record(review_run, args, message):
    with pytest.raises(WorkbenchError, match=message.replace("[", r"\[")):
        record_review(trial(review_run), *args, reviewer="Ada")
    with pytest.raises(WorkbenchError, match="reviewer's name"):
        record_review(trial(review_run), "v2", 1.0, reviewer="  ")
    assert Store.for_run(review_run).reviews_for("run").empty


def test_a_trial_outside_a_run_cannot_be_reviewed(review_run, tmp_path):
    import shutil

    lone = tmp_path / "lone"
    shutil.copytree(trial(review_run), lone)
    with pytest.raises(WorkbenchError, match="not inside a run directory"):
        record_review(lone, "v2", 1.0, reviewer="Ada")
