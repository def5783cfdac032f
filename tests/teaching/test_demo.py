"""`workbench demo` goes through `workbench run`'s path: run again, it replaces its trials and keeps the run's
expert review records (it once deleted the folder, review records and all)."""

from __future__ import annotations

import json

import workbench.teaching.demo
from tests.conftest import run_cli, write_task
from workbench.paths import RunPaths
from workbench.review.records import record_review
from workbench.store import Store
from workbench.teaching.demo import run_demo


def test_the_demo_run_again_replaces_its_trials_and_keeps_their_reviews(tmp_path, monkeypatch):
    monkeypatch.setattr(workbench.teaching.demo, "DEMO_TASK", write_task(tmp_path / "mini"))  # the path, not the curve
    out = tmp_path / "demo"
    first = run_demo(out, engine="inline")
    assert [r.config.agent for r in first] == ["oracle", "nop"] and first[0].outcome["awaiting_review"] == 1
    oracle = RunPaths(out).trial(first[0].id)
    record_review(oracle.root, "v2", 1.0, reviewer="A. Expert", store=Store.for_run(out))

    second = run_demo(out, engine="inline")
    assert [r.id for r in second] == [r.id for r in first] and second[0].started_at >= first[0].finished_at
    reviews = Store.for_run(out).reviews_for(out.name)
    assert list(reviews.reviewer) == ["A. Expert"] and list(reviews.leaf_id) == ["v2"]  # the record survived
    # the replay made the same evidence, so the review judged this very evidence and applies again
    leaf = {lf["id"]: lf for lf in json.loads(oracle.scores.read_text())["leaves"]}["v2"]
    assert leaf["status"] == "reviewed" and leaf["score"] == 1.0 and second[0].outcome["awaiting_review"] == 0


def test_the_demo_refuses_a_folder_that_is_not_a_run_and_leaves_it_alone(tmp_path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "thesis.md").write_text("two years of notes")
    proc = run_cli("demo", "--out", str(mine), "--engine", "inline")
    assert proc.returncode == 1 and "not empty and not a run folder" in proc.stderr
    assert [p.name for p in mine.iterdir()] == ["thesis.md"] and "Traceback" not in proc.stderr
