"""`workbench demo` goes through `workbench run`'s path: run again, it replaces its trials and keeps the run's
expert review records (it once deleted the folder, review records and all)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from workbench.demo import run_demo
from workbench.paths import RunPaths
from workbench.review.records import record_review
from workbench.store import Store


@pytest.mark.slow
def test_the_demo_run_again_replaces_its_trials_and_keeps_their_reviews(tmp_path, demo_task):
    out = tmp_path / "demo"
    first = run_demo(out, engine="inline")
    assert [r.config.agent for r in first] == ["oracle", "nop"]
    assert first[0].outcome["R"] > 0.9 and first[1].outcome["R"] == 0
    oracle = RunPaths(out).trial(first[0].id)
    record_review(oracle.root, "A5", 1.0, reviewer="A. Expert", store=Store.for_run(out))
    first_digest = json.loads(oracle.scores.read_text())["evidence_digest"]

    second = run_demo(out, engine="inline")
    assert [r.id for r in second] == [r.id for r in first] and second[0].started_at >= first[0].finished_at
    reviews = Store.for_run(out).reviews_for(out.name)
    assert list(reviews.reviewer) == ["A. Expert"] and list(reviews.leaf_id) == ["A5"]  # the record survived
    # the new replay's log has other timings, so the review judged other evidence: kept and shown as stale,
    # never applied to evidence it did not see
    scores = json.loads(oracle.scores.read_text())
    assert scores["stale_reviews"] == 1 and scores["evidence_digest"] != first_digest
    assert {lf["id"]: lf["status"] for lf in scores["leaves"]}["A5"] == "pending_review"
    queue = run_cli("review", "queue", str(out))
    assert "1 stale review(s)" in queue.stdout and "A5: 1 by A. Expert" in queue.stdout


def test_the_demo_refuses_a_folder_that_is_not_a_run_and_leaves_it_alone(tmp_path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "thesis.md").write_text("two years of notes")
    proc = run_cli("demo", "--out", str(mine), "--engine", "inline")
    assert proc.returncode == 1 and "not empty and not a run folder" in proc.stderr
    assert [p.name for p in mine.iterdir()] == ["thesis.md"] and "Traceback" not in proc.stderr
