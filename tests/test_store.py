import json

import pytest

from tests.conftest import config, write_task
from workbench.store import Store
from workbench.task import load_task
from workbench.trial.pipeline import run_trial


@pytest.mark.slow
def test_index_rebuilds_from_trial_directories_without_duplicates(tmp_path):
    task = load_task(write_task(tmp_path / "mini"))
    run = tmp_path / "run"
    for agent in ("oracle", "nop"):
        run_trial(task, config(agent), run, engine="inline")
    store = Store.for_run(run)
    assert store.rebuild(run) == 2
    assert store.rebuild(run) == 2  # idempotent
    store.upsert_trial(run / "trials/mini__oracle__1")
    trials = store.frame()
    assert sorted(trials.trial_id) == ["mini__nop__1", "mini__oracle__1"]
    row = trials.set_index("trial_id").loc["mini__oracle__1"]
    assert row.status == "complete" and row.R == 0.75 and row.delivery == "delivered" and row.engine == "inline"
    assert row.modeling_earned == 0.25 and row.awaiting_review == 1
    leaves = store.frame("leaf_scores")
    assert len(leaves) == 8 and set(leaves.status) >= {"scored", "pending_review"}
    timings = store.frame("stage_timings")
    assert sorted(timings[timings.trial_id == "mini__nop__1"].stage) == ["replay", "review", "score", "session"]
    assert (timings.seconds >= 0).all()
    # each stage's seconds on the trial's row too: what the report reads
    stage_rows = timings.set_index(["trial_id", "stage"]).seconds
    nop = trials.set_index("trial_id").loc["mini__nop__1"]
    assert [nop[f"{s}_seconds"] for s in ("session", "replay", "score", "review")] == [
        stage_rows["mini__nop__1", s] for s in ("session", "replay", "score", "review")]
    # where scoring's time went, as scores.json says: the checks ran in the confined reader; no judge here
    timing = json.loads((run / "trials/mini__oracle__1/scores.json").read_text())["timing"]
    assert row.score_checks_seconds == timing["checks_seconds"] > 0 and row.score_other_seconds >= 0
    assert (row.score_judge_seconds, row.judge_calls) == (0, 0)


@pytest.mark.slow
def test_index_command(tmp_path):
    from tests.conftest import run_cli

    task = load_task(write_task(tmp_path / "mini"))
    run_trial(task, config("oracle"), tmp_path / "run", engine="inline")
    proc = run_cli("index", str(tmp_path / "run"))
    assert proc.returncode == 0 and "indexed 1 trial(s)" in proc.stdout
    proc = run_cli("index", str(tmp_path))
    assert proc.returncode == 1 and "not a run directory" in proc.stderr


@pytest.mark.slow
def test_every_backend_indexes_trials_and_keeps_reviews_through_a_schema_change(store_url, tmp_path):
    from sqlalchemy import insert

    from workbench import store as store_mod

    task = load_task(write_task(tmp_path / "mini"))
    run = tmp_path / "run"
    run_trial(task, config("oracle"), run, engine="inline")
    store = Store(store_url)
    assert store.rebuild(run) == 1 and store.rebuild(run) == 1
    assert store.frame().R.tolist() == [0.75] and len(store.frame("leaf_scores")) == 4
    narrow = store.frame("trials", "run", columns=["trial_id", "score_seconds"])
    assert list(narrow.columns) == ["trial_id", "score_seconds"] and narrow.score_seconds[0] > 0
    rid = store.add_review(run="run", trial_id="mini__oracle__1", task="mini", leaf_id="v2", reviewer="Ada",
                           score=1.0, previous_score=None, comment="ok")
    store.set_setting("run", "reviewers_required", "2")
    store.set_setting("run", "reviewers_required", "3")
    # an index written by another schema version is dropped and rebuilt; reviews and settings are primary data
    with store.db.begin() as conn:
        conn.execute(store_mod.meta.delete())
        conn.execute(insert(store_mod.meta).values(key="schema_version", value="0"))
    again = Store(store_url)
    assert again.frame().empty and again.rebuild(run) == 1
    reviews = again.reviews_for("run")
    assert list(reviews.review_id) == [rid] and reviews.reviewer[0] == "Ada"
    assert again.get_setting("run", "reviewers_required") == "3" and again.get_setting("other", "x", "d") == "d"


@pytest.mark.slow
def test_two_runs_share_one_store_without_mixing(store_url, tmp_path):
    task = load_task(write_task(tmp_path / "mini"))
    for name in ("a", "b"):
        run_trial(task, config("oracle"), tmp_path / name, engine="inline")
    store = Store(store_url)
    store.rebuild(tmp_path / "a")
    store.rebuild(tmp_path / "b")
    store.rebuild(tmp_path / "a")
    assert sorted(store.frame().run) == ["a", "b"] and store.trial_ids("a") == ["mini__oracle__1"]


def test_a_postgresql_url_without_a_driver_uses_psycopg():
    from workbench.store import _with_driver

    assert _with_driver("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert _with_driver("sqlite:///x.db") == "sqlite:///x.db"


def test_a_table_read_in_parts_is_the_table_read_at_once(tmp_path, monkeypatch):
    """Reads convert a few rows at a time (memory); a part where a column is all NULL (here the sota
    results, only on the first tasks) must not change that column's type."""
    import pandas as pd

    from workbench import store as store_mod
    from workbench.analysis.synthetic import synthesize

    synthesize(tmp_path / "run", configs=2, tasks=6, attempts=2, leaves=6, fields=2, seed=4)
    store = Store.for_run(tmp_path / "run")
    whole = store.frame("trials", "run")
    monkeypatch.setattr(store_mod, "READ_ROWS", 6)
    parts = store.frame("trials", "run")
    assert whole.sota_g.dtype == float and whole.sota_g.notna().any()
    assert any(whole.sota_g.iloc[i:i + 6].isna().all() for i in range(0, len(whole), 6))  # a part without any
    pd.testing.assert_frame_equal(parts, whole)
