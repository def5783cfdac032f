from tests.conftest import config, write_task
from workbench.pipeline import run_trial
from workbench.store import Store
from workbench.task import load_task


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
    assert row.modeling == 0.25 and row.pending_review == 1
    leaves = store.frame("leaf_scores")
    assert len(leaves) == 8 and set(leaves.status) >= {"scored", "pending_review"}
    timings = store.frame("stage_timings")
    assert sorted(timings[timings.trial_id == "mini__nop__1"].stage) == ["replay", "review", "score", "session"]
    assert (timings.seconds >= 0).all()


def test_index_command(tmp_path):
    from tests.conftest import run_cli

    task = load_task(write_task(tmp_path / "mini"))
    run_trial(task, config("oracle"), tmp_path / "run", engine="inline")
    proc = run_cli("index", str(tmp_path / "run"))
    assert proc.returncode == 0 and "indexed 1 trial(s)" in proc.stdout
    proc = run_cli("index", str(tmp_path))
    assert proc.returncode == 1 and "not a run directory" in proc.stderr
