"""The spine end to end on the real demo task (PySCF in the sandbox): slow."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import DEMO, config
from workbench.errors import WorkbenchError
from workbench.paths import RunPaths
from workbench.replay.trial import replay_trial
from workbench.scoring import Scores, score_trial
from workbench.trial.pipeline import run_trial, trial_id, write_single_run_spec

pytestmark = pytest.mark.slow


def test_trial_ids_are_deterministic():
    assert trial_id("h2-pes", "gpt 5/high", 2) == "h2-pes__gpt-5-high__2"


def _scores(out, tid) -> Scores:
    return Scores.model_validate_json(RunPaths(out).trial(tid).scores.read_text())


def test_oracle_reproduces_and_nop_scores_zero(demo_batch):
    out, _ = demo_batch
    for attempt in (1, 2):
        oracle, nop = _scores(out, f"h2-pes__oracle__{attempt}"), _scores(out, f"h2-pes__nop__{attempt}")
        assert oracle.R > 0.9 and oracle.full
        assert all(lf.score == 1 for lf in oracle.leaves if lf.status == "scored")
        assert nop.R == 0 and not nop.full
        rec = json.loads(RunPaths(out).trial(f"h2-pes__nop__{attempt}").trial_json.read_text())
        assert rec["outcome"]["delivery"] == "starter_only" and rec["outcome"]["replay"] == "failed"


def test_the_trial_directory_has_the_documented_layout(demo_batch):
    out, _ = demo_batch
    tp = RunPaths(out).trial("h2-pes__oracle__1")
    for p in (tp.trial_json, tp.submission / "reproduce.sh", tp.trajectory, tp.agent_log, tp.usage, tp.delivery,
              tp.provenance, tp.stdout_log, tp.stderr_log, tp.manifest, tp.scores):
        assert p.exists(), p
    record = json.loads(tp.trial_json.read_text())
    assert record["status"] == "complete" and record["engine"] == "papermill"
    assert [record["stages"][s]["status"] for s in ("session", "replay", "score", "review")] == ["done"] * 4
    prov = json.loads(tp.provenance.read_text())
    assert prov["status"] == "succeeded" and prov["wall_sec"] < 180
    assert prov["environment"]["dir"].startswith(("/opt/workbench/envs/", os.environ.get("WORKBENCH_ENVS", "/")))
    run = json.loads(RunPaths(out).run_json.read_text())
    assert [a["name"] for a in run["matrix"]["agents"]] == ["oracle", "nop"] and "h2-pes" in run["tasks"]


@pytest.mark.parametrize(("name", "low", "high"), [("partial", 0.1, 0.5), ("invalid", 0.0, 0.3)])
def test_calibration_submissions_earn_partial_credit_only(demo_task, tmp_path, name, low, high):
    # the invalid types the paper's values in: no PySCF process wrote them, so its root gates fail
    replay_trial(demo_task, DEMO / "calibration" / name, tmp_path)
    s = score_trial(demo_task, tmp_path)
    assert low <= s.R < high and not s.full
    by = {lf.id: lf for lf in s.leaves}
    assert by["C3"].score == 0 and by["C4"].score == 0  # the headline numbers are not supported


def test_a_changed_task_is_refused_by_an_existing_run(demo_task, tmp_path):
    RunPaths(tmp_path).run_json.write_text(json.dumps({"tasks": {"h2-pes": "0" * 64}, "configs": {}}))
    with pytest.raises(WorkbenchError, match="changed since"):
        write_single_run_spec(RunPaths(tmp_path), demo_task, config("nop"))


def test_an_infrastructure_failure_in_a_stage_is_recorded_not_scored(tmp_path, monkeypatch):
    from tests.conftest import write_task
    from workbench.task import load_task

    task = load_task(write_task(tmp_path / "task"))
    import workbench.trial.pipeline as pipeline

    def broken(*a, **kw):
        raise WorkbenchError("sandbox: bwrap could not set up the sandbox: simulated")

    monkeypatch.setattr(pipeline.stages, "RUNNERS", {**pipeline.stages.RUNNERS, "replay": broken})
    with pytest.raises(WorkbenchError, match="simulated"):
        run_trial(task, config("oracle"), tmp_path / "runs", engine="inline")
    tp = RunPaths(tmp_path / "runs").trial("task__oracle__1")
    record = json.loads(tp.trial_json.read_text())
    assert record["status"] == "infra_error" and "simulated" in record["error"]
    assert record["stages"]["session"]["status"] == "done"
    assert record["stages"]["replay"]["status"] == "failed" and "simulated" in record["stages"]["replay"]["error"]
    assert record["stages"]["score"]["status"] == "queued"
    assert not tp.scores.exists()
