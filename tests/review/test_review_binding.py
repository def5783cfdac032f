"""Reviews are bound to the evidence they judged: a re-run trial does not inherit them."""

from __future__ import annotations

import json

import pytest

from tests.conftest import config, run_cli, write_files
from tests.review.conftest import ORACLE_R, SIXTH, leaves, trial
from workbench.review import Reviewer, record_review
from workbench.store import Store
from workbench.task import load_task
from workbench.trial.pipeline import run_trial

pytestmark = pytest.mark.slow

WRONG = 'mkdir -p results\necho \'{"value": 7}\' > results/value.json\necho "nothing converged" > results/log.txt\n'


def rerun(run, tmp_path, agent: str = "replay"):
    """Run trial mini__oracle__1 again, in place: with another submission, or the oracle again."""
    task = load_task(tmp_path / "mini")
    opts = {"submission": str(write_files(tmp_path / "other", {"reproduce.sh": WRONG}))} if agent == "replay" else {}
    return run_trial(task, config(agent, name="oracle", options=opts), run, engine="inline")


def test_a_rerun_with_other_evidence_applies_no_old_review_and_shows_it_stale(review_run, tmp_path):
    t = trial(review_run)
    record_review(t, "v2", 1.0, reviewer="Ada", comment="the log shows convergence")
    assert leaves(t)["v2"]["status"] == "reviewed"
    rerun(review_run, tmp_path)
    v2 = leaves(t)["v2"]
    assert v2["status"] == "pending_review" and v2["score"] is None  # Ada never saw this log
    assert v2["review"]["stale"] == 1
    scores = json.loads((t / "scores.json").read_text())
    assert scores["stale_reviews"] == 1 and scores["R"] < ORACLE_R
    proc = run_cli("review", "queue", str(review_run))
    assert proc.returncode == 0, proc.stderr
    assert "1 stale review(s), not applied" in proc.stdout
    assert "stale: mini__oracle__1 v2: 1 by Ada" in proc.stdout and "evidence changed" in proc.stdout

    rv = Reviewer(review_run)
    rv.leaves.value = ("mini__oracle__1", "v2")
    assert "1 stale review(s)" in rv.detail.value and "<b>stale</b>" in rv.detail.value


def test_the_same_evidence_again_keeps_its_reviews(review_run, tmp_path):
    t = trial(review_run)
    record_review(t, "v2", 1.0, reviewer="Ada")
    rerun(review_run, tmp_path, agent="oracle")  # the reference again: byte-identical evidence
    assert leaves(t)["v2"]["status"] == "reviewed"
    assert json.loads((t / "scores.json").read_text())["R"] == pytest.approx(ORACLE_R + SIXTH)


def _index_equals_scores(run, trial_dir):
    scores = json.loads((trial_dir / "scores.json").read_text())
    outcome = json.loads((trial_dir / "trial.json").read_text())["outcome"]
    row = Store.for_run(run).frame().set_index("trial_id").loc[trial_dir.name]
    pending = sum(1 for lf in scores["leaves"] if lf["status"] in ("pending_review", "withheld", "disputed"))
    for field in ("R", "R_upper", "coverage"):
        assert getattr(row, field) == pytest.approx(scores[field]) and outcome[field] == scores[field], field
    for field in ("full", "full_upper", "final", "needs_rescoring"):
        assert bool(getattr(row, field)) == scores[field] and outcome[field] == scores[field], field
    for phase, value in scores["phases"].items():
        assert getattr(row, f"{phase}_earned") == pytest.approx(value) and outcome["phases"][phase] == value
    assert row.awaiting_review == pending == outcome["awaiting_review"]
    leaf_rows = Store.for_run(run).frame("leaf_scores")
    leaf_rows = leaf_rows[leaf_rows.trial_id == trial_dir.name].set_index("leaf_id")
    assert {k: (r.status, r.score if r.score == r.score else None) for k, r in leaf_rows.iterrows()} == \
        {lf["id"]: (lf["status"], lf["score"]) for lf in scores["leaves"]}


def test_the_index_and_trial_json_equal_scores_json_after_every_verb(review_run):
    t = trial(review_run)
    steps = [("score", str(review_run.parent / "mini"), "--trial", str(t)),
             ("review", "set", str(t), "v2", "1", "--reviewer", "Ada"),
             ("review", "set", str(t), "v1", "0", "--reviewer", "Ada", "--comment", "hard-coded"),
             ("review", "adjudicate", str(t), "v1", "1", "--reviewer", "Chair"),
             "change the rubric: e1's check now fails",
             ("score", str(review_run.parent / "mini"), "--trial", str(t))]
    before = json.loads((t / "scores.json").read_text())["R"]
    for step in steps:
        if isinstance(step, str):
            path = review_run.parent / "mini" / "tests" / "rubric.json"
            path.write_text(path.read_text().replace('"replay_succeeded"', '"file_exists", "path": "results/nope"'))
            continue
        proc = run_cli(*step)
        assert proc.returncode == 0, (step, proc.stderr)
        if (review_run / "results.db").is_file():  # once the run has an index, every verb keeps it current
            _index_equals_scores(review_run, t)
        assert run_cli("index", str(review_run)).returncode == 0
        _index_equals_scores(review_run, t)  # and a rebuild says the same
    assert json.loads((t / "scores.json").read_text())["R"] == pytest.approx(before + SIXTH - 0.25)
