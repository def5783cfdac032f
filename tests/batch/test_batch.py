"""Batches: resume exactly once after SIGKILL in any stage, refused resumes, fallbacks, engines (executors:
tests/batch/executors/)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import MATRIX, REPO, write_task
from workbench.batch.matrix import load_matrix
from workbench.batch.run import run_batch
from workbench.errors import ValidationProblem, WorkbenchError
from workbench.paths import RunPaths
from workbench.store import Store

SLOW_SOLUTION = ('sleep 2\nmkdir -p results\necho \'{"value": 42}\' > results/value.json\n'
                 'echo fine > results/log.txt\n')


def _setup(tmp_path, attempts=1, **task_kw) -> tuple[Path, Path]:
    task = write_task(tmp_path / "mini", **task_kw)
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(MATRIX.format(task=task, attempts=attempts))
    return task, matrix


def _records(run: Path) -> dict[str, dict]:
    return {p.name: json.loads((p / "trial.json").read_text()) for p in sorted((run / "trials").iterdir())}


def _assert_exactly_once(run: Path, expected: set[str]) -> None:
    recs = _records(run)
    assert set(recs) == expected
    assert all(r["status"] == "complete" for r in recs.values()), {k: r["status"] for k, r in recs.items()}
    store = Store.for_run(run)
    assert store.trial_ids() == sorted(expected)
    leaves = store.frame("leaf_scores")
    assert not leaves.duplicated(["trial_id", "leaf_id"]).any()
    assert len(leaves) == 4 * len(expected)  # the mini rubric has 4 leaves


def _batch_process(matrix: Path, run: Path, *extra: str, mark: str = "") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "workbench", "batch", str(matrix), "--out", str(run),
                             "--workers", "1", *extra], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "WORKBENCH_TEST_MARK": mark})


def _alive_with_mark(mark: str) -> list[int]:
    """Live processes (not zombies) whose environment carries the mark: the batch's whole tree."""
    pids = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and f"WORKBENCH_TEST_MARK={mark}".encode() in (p / "environ").read_bytes() \
                    and (p / "stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX":
                pids.append(int(p.name))
        except OSError:
            continue
    return pids


def _wait_for_stage(trial_json: Path, stage: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the batch ended before the stage was reached"
        try:
            if json.loads(trial_json.read_text())["stages"][stage]["status"] == "running":
                return
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pass
        time.sleep(0.02)
    raise AssertionError(f"stage {stage} never ran")


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["session", "replay", "score", "review"])
def test_sigkill_during_a_stage_then_resume_gives_every_outcome_exactly_once(tmp_path, stage):
    task, matrix = _setup(tmp_path)
    run = tmp_path / "run"
    mark = f"kill-{stage}-{os.getpid()}"
    proc = _batch_process(matrix, run, mark=mark)
    # workers=1 runs oracle first; kill while the second trial (nop) is in the stage
    _wait_for_stage(run / "trials/mini__nop__1/trial.json", stage, proc)
    assert len(_alive_with_mark(mark)) >= 2  # the batch and its worker (+ kernel, sandbox)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while _alive_with_mark(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_with_mark(mark) == []  # worker, kernel and sandbox died with the batch
    before = _records(run)
    assert before["mini__oracle__1"]["status"] == "complete"
    assert before["mini__nop__1"]["status"] == "running"

    result = run_batch(matrix, run, resume=True, workers=1, progress=False)  # waits for any straggler's lock
    assert result.skipped == 1 and result.counts.get("complete") == 1
    _assert_exactly_once(run, {"mini__oracle__1", "mini__nop__1"})
    after = _records(run)
    assert after["mini__oracle__1"]["started_at"] == before["mini__oracle__1"]["started_at"]  # not re-run
    assert after["mini__oracle__1"]["outcome"]["R"] == pytest.approx(0.75)
    assert all(Path(run / "trials/mini__nop__1" / s["notebook"]).is_file()
               for s in after["mini__nop__1"]["stages"].values())
    # resuming a finished batch does nothing
    again = run_batch(matrix, run, resume=True, workers=1, progress=False)
    assert again.skipped == 2 and _records(run) == after


@pytest.mark.slow
def test_resume_is_refused_when_the_matrix_or_a_task_changed(tmp_path):
    task, matrix = _setup(tmp_path)
    run = tmp_path / "run"
    run_batch(matrix, run, engine="inline", workers=1, progress=False)
    with pytest.raises(WorkbenchError, match="already holds a run; add --resume"):
        run_batch(matrix, run, engine="inline", progress=False)
    matrix.write_text(MATRIX.format(task=task, attempts=2))
    with pytest.raises(WorkbenchError, match=r"the matrix changed since the batch started \(attempts: 1 -> 2\)"):
        run_batch(matrix, run, resume=True, engine="inline", progress=False)
    matrix.write_text(MATRIX.format(task=task, attempts=1))
    (task / "instruction.md").write_text("A different contract.\n")
    with pytest.raises(WorkbenchError, match="task content changed since the batch started: mini"):
        run_batch(matrix, run, resume=True, engine="inline", progress=False)
    with pytest.raises(WorkbenchError, match="nothing to resume"):
        run_batch(matrix, tmp_path / "fresh", resume=True, engine="inline", progress=False)


@pytest.mark.slow
def test_a_job_run_twice_keeps_its_first_result_and_a_rerun_runs_whatever_the_record_says(tmp_path):
    """A distributed executor may run a job again after it finished (its worker lost): the second run finds the
    record written since the batch planned the job and keeps it. A record planned over is re-run even when it
    claims to have started in the future (no clock decides it)."""
    from dataclasses import replace

    from workbench.batch.run import plan, run_job
    from workbench.trial.record import record_digest

    task, matrix = _setup(tmp_path)
    run = tmp_path / "run"
    run_batch(matrix, run, engine="inline", workers=1, progress=False)
    tp = RunPaths(run).trial("mini__oracle__1")
    rec = json.loads(tp.trial_json.read_text())
    rec["started_at"] = "2999-01-01T00:00:00+00:00"  # a hand-placed record, or a clock far ahead
    tp.trial_json.write_text(json.dumps(rec))
    jobs = plan(*load_matrix(matrix), run.resolve(), "inline")
    job = next(j for j in jobs if j.trial_id == tp.root.name)

    res = run_job(replace(job, planned=record_digest(tp)))  # --rerun-status complete planned over that record
    assert res["status"] == "complete" and res["started_at"] != "2999-01-01T00:00:00+00:00"
    first = tp.trial_json.read_bytes()
    again = run_job(replace(job, planned=""))  # the same job again, planned when there was no record yet
    assert tp.trial_json.read_bytes() == first and again["started_at"] == res["started_at"]

    rec["started_at"] = "2999-01-01T00:00:00+00:00"
    tp.trial_json.write_text(json.dumps(rec))
    res = run_batch(matrix, run, resume=True, rerun_status=("complete",), engine="inline", workers=1, progress=False)
    assert res.counts.get("complete") == 2
    assert json.loads(tp.trial_json.read_text())["started_at"] != "2999-01-01T00:00:00+00:00"


@pytest.mark.slow
def test_infra_errors_are_kept_unless_asked_to_rerun(tmp_path, monkeypatch):
    task, matrix = _setup(tmp_path)
    (task / "environment" / "install.sh").write_text('mkdir -p "$WORKBENCH_ENV/bin"\n')
    envs = Path(tempfile.mkdtemp(prefix="wb-envs-"))  # reachable by the sandbox user, unlike pytest's tmp
    os.chmod(envs, 0o755)
    monkeypatch.setenv("WORKBENCH_ENVS", str(envs))  # not installed yet: every replay is an infra error
    run = tmp_path / "run"
    res = run_batch(matrix, run, engine="inline", workers=1, progress=False)
    assert res.counts == {"skipped": 0, "infra_error": 2}
    recs = _records(run)
    assert all(r["status"] == "infra_error" and "is not installed" in r["error"] for r in recs.values())
    assert not (run / "trials/mini__oracle__1/scores.json").exists()  # withheld, never a 0

    from workbench.sandbox.environments import install_env
    from workbench.task import load_task

    install_env(load_task(task))
    assert run_batch(matrix, run, resume=True, engine="inline", progress=False).skipped == 2
    res = run_batch(matrix, run, resume=True, rerun_status=("infra_error",), engine="inline", progress=False)
    assert res.counts == {"skipped": 0, "complete": 2}
    _assert_exactly_once(run, {"mini__oracle__1", "mini__nop__1"})
    shutil.rmtree(envs)


@pytest.mark.slow
def test_a_second_batch_on_the_same_directory_is_refused(tmp_path):
    _, matrix = _setup(tmp_path)
    (tmp_path / "mini/solution/reproduce.sh").write_text(SLOW_SOLUTION)
    run = tmp_path / "run"
    proc = _batch_process(matrix, run, "--engine", "inline")
    try:
        _wait_for_stage(run / "trials/mini__oracle__1/trial.json", "replay", proc)
        with pytest.raises(WorkbenchError, match="another batch is running"):
            run_batch(matrix, run, resume=True, engine="inline", progress=False)
    finally:
        proc.wait(timeout=120)


@pytest.mark.slow
def test_fallback_configuration_takes_over_after_a_refusal(tmp_path):
    task = write_task(tmp_path / "mini")
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(f'''tasks = ["{task}"]
[[agents]]
name = "shy"
agent = "refuse"
fallback = "oracle"
[[agents]]
name = "stubborn"
agent = "refuse"
[[agents]]
name = "oracle"
agent = "oracle"
''')
    run = tmp_path / "run"
    run_batch(matrix, run, engine="inline", workers=2, progress=False)
    recs = _records(run)
    shy, stubborn = recs["mini__shy__1"], recs["mini__stubborn__1"]
    assert shy["outcome"]["refused"] and shy["outcome"]["fallback_used"] == "oracle"
    assert shy["outcome"]["R"] == pytest.approx(0.75)  # the fallback's submission decides the score
    assert shy["fallback"] == {"refused_by": "shy", "used": "oracle"}
    assert (run / "trials/mini__shy__1/session.refused/trajectory.jsonl").is_file()
    assert stubborn["outcome"]["refused"] and stubborn["outcome"]["fallback_used"] is None
    assert stubborn["outcome"]["R"] == 0  # a refusal without a fallback scores 0


@pytest.mark.parametrize("text,msg", [
    ('tasks = []\n[[agents]]\nname = "a"\nagent = "nop"\n', "tasks: List should have at least 1 item"),
    ('tasks = ["{task}"]\n[[agents]]\nname = "a"\nagent = "gpt"\n', "agents.0.agent: unknown agent"),
    ('tasks = ["{task}"]\nattempts = 0\n[[agents]]\nname = "a"\nagent = "nop"\n', "attempts: Input should be"),
    ('tasks = ["{task}"]\n[[agents]]\nname = "a b"\nagent = "nop"\n', "agents.0.name"),
    ('tasks = ["{task}"]\n[[agents]]\nname = "a"\nagent = "nop"\nfallback = "z"\n', "a.fallback = 'z'"),
    ('tasks = ["nowhere"]\n[[agents]]\nname = "a"\nagent = "nop"\n', "tasks.0: 'nowhere' is not a task"),
    ('tasks = ["{task}"]\nagent = [\n', "not valid TOML"),
    ('tasks = ["{task}"]\n[[agents]]\nname = "a"\nagent = "nop"\noptions = { modle = 1 }\n',
     "agents.0: the nop agent has no option 'modle'"),
    ('tasks = ["{task}"]\nworkers = 3\n[[agents]]\nname = "a"\nagent = "nop"\n', "workers: Extra inputs"),
])
def test_bad_matrices_name_the_file_and_field(tmp_path, text, msg):
    task = write_task(tmp_path / "mini")
    path = tmp_path / "m.toml"
    path.write_text(text.replace("{task}", str(task)))
    with pytest.raises(ValidationProblem) as exc:
        load_matrix(path)
    assert any(p.startswith(str(path)) and msg in p for p in exc.value.problems), exc.value.problems


@pytest.mark.slow
def test_trial_ids_and_paths_are_deterministic(tmp_path):
    _, matrix = _setup(tmp_path, attempts=2)
    run_batch(matrix, tmp_path / "run", engine="inline", progress=False)
    assert sorted(_records(tmp_path / "run")) == ["mini__nop__1", "mini__nop__2", "mini__oracle__1",
                                                  "mini__oracle__2"]
    assert RunPaths(tmp_path / "run").results_db.is_file()


def test_the_closing_table_marks_outcomes_awaiting_review_and_withheld(tmp_path):
    """The mini rubric's oracle trial has leaves awaiting review: its mean R is a lower bound, said so."""
    from tests.conftest import run_cli

    _, matrix = _setup(tmp_path)
    proc = run_cli("batch", str(matrix), "--out", str(tmp_path / "run"), "--workers", "1", "--engine", "inline")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line.startswith(("nop ", "oracle "))}
    assert rows["oracle"][4].startswith("≥") and rows["oracle"][-2:] == ["1", "0"]  # provisional 1, withheld 0
    assert rows["nop"][4] == "0.0000" and rows["nop"][-2:] == ["0", "0"]
    assert "≥: outcomes await review (R so far, a lower bound)" in proc.stdout
    # a trial flagged for rescoring leaves the mean and is counted as withheld
    from workbench.batch.run import summary_rows
    from workbench.store import Store

    store = Store.for_run(tmp_path / "run")
    with store.db.begin() as conn:
        conn.exec_driver_sql("UPDATE trials SET needs_rescoring = 1 WHERE config = 'oracle'")
    (oracle,) = [r for r in summary_rows(tmp_path / "run") if r["config"] == "oracle"]
    assert oracle["withheld"] == 1 and oracle["mean_R"] is None and oracle["provisional"] == 0
