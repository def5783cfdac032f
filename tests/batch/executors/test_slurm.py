"""The slurm executor on a real one-node SLURM cluster (tests/slurm_cluster.py): same outcomes as the local
pool on the demo task, jobs sized from the task, and a job cancelled mid-trial re-run with every outcome
exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.batch.test_batch import SLOW_SOLUTION, _assert_exactly_once, _records, _setup
from tests.conftest import DEMO, MATRIX, REPO, write_task
from workbench.batch.run import run_batch
from workbench.paths import RunPaths
from workbench.scoring import Scores


@pytest.mark.slurm
def test_the_cluster_runs_a_job_on_two_cpus(slurm_cluster):
    assert slurm_cluster.started_sec < 30
    info = slurm_cluster.run("sinfo", "-h", "-N", "-o", "%N %c %T").stdout.split()
    assert info == ["localhost", "2", "idle"]
    deadline = time.monotonic() + 30  # the session's cluster: a job an earlier test left may still be ending
    while slurm_cluster.jobs() and time.monotonic() < deadline:
        time.sleep(0.2)
    out = slurm_cluster.root / "hello.out"
    # the job's CPU affinity, not nproc: nproc honours OMP_NUM_THREADS, which sbatch exports from this process
    # and which a Dask LocalCluster sets to 1 in the os.environ of whoever started it (an earlier test)
    cpus = "python3 -c 'import os; print(len(os.sched_getaffinity(0)))'"
    jid = slurm_cluster.run("sbatch", "--parsable", "-c", "2", "-o", str(out), "--wrap", f"{cpus}; echo hello").stdout
    deadline = time.monotonic() + 30
    while not (out.is_file() and "hello" in out.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert out.read_text().split() == ["2", "hello"], (jid, slurm_cluster.jobs(), slurm_cluster.log_tail())


def _scored(run: Path, tid: str) -> tuple:
    """What a trial earned: its outcome and every leaf's status and score."""
    scores = Scores.model_validate_json(RunPaths(run).trial(tid).scores.read_text())
    rec = _records(run)[tid]
    return (rec["status"], rec["outcome"]["replay"], rec["outcome"]["delivery"], scores.R, scores.full,
            [(lf.id, lf.status, lf.score) for lf in scores.leaves])


@pytest.mark.slow
@pytest.mark.slurm
@pytest.mark.heavy
def test_demo_task_trials_run_through_slurm_to_the_scores_of_the_local_pool(tmp_path, slurm_cluster, demo_batch):
    local, _ = demo_batch  # the demo task x {oracle, nop} x 2 attempts on the local pool, papermill
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(MATRIX.format(task=DEMO, attempts=1))
    t0 = time.monotonic()
    res = run_batch(matrix, tmp_path / "slurm", executor="slurm", workers=2, progress=False,
                    slurm={"walltime": "00:10:00", "partition": slurm_cluster.partition})
    took = time.monotonic() - t0
    assert res.counts == {"skipped": 0, "complete": 2}
    for tid in ("h2-pes__oracle__1", "h2-pes__nop__1"):
        assert _scored(tmp_path / "slurm", tid) == _scored(local, tid), tid
    assert _scored(local, "h2-pes__oracle__1")[3] > 0.9  # the comparison is not of two failures
    # jobs sized from the task (cpus = 2, memory_mb = 4096, + the worker's 512): the node's 2 CPUs hold one
    assert "slurm (2 job(s) of 2 CPU(s), 4608 MB, walltime 00:10:00, worker lifetime 540 s" in res.executor
    spans = sorted((r["started_at"], r["finished_at"]) for r in _records(tmp_path / "slurm").values())
    assert spans[0][1] <= spans[1][0], spans  # so the two trials ran one after the other
    assert len(list((tmp_path / "slurm" / "slurm").glob("*.err"))) == 1  # in the one job that could start
    print(f"2 demo trials through slurm in {took:.1f} s")


@pytest.mark.slurm
def test_a_job_cancelled_mid_trial_is_replaced_and_the_trial_run_again_exactly_once(tmp_path, slurm_cluster):
    task, matrix = _setup(tmp_path)
    (task / "solution" / "reproduce.sh").write_text(SLOW_SOLUTION.replace("sleep 2", "sleep 4"))
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "batch", str(matrix), "--out", str(run),
                             "--executor", "slurm", "--jobs", "1", "--walltime", "00:10:00", "--engine", "inline"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    trial_json = run / "trials/mini__oracle__1/trial.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            rec = json.loads(trial_json.read_text())
            if rec["stages"]["replay"]["status"] == "running":
                break
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    else:
        raise AssertionError("the oracle's replay never ran")
    first_start = rec["started_at"]
    [job] = [j for j in slurm_cluster.jobs() if j["state"] == "RUNNING"]
    slurm_cluster.run("scancel", job["id"])  # the job's worker, its trial thread and the replay die
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "2 trials (complete 2) on slurm (1 job(s)" in stdout
    assert "jobs_running=1" in stderr  # the progress bar: jobs queued / running, trials running
    _assert_exactly_once(run, {"mini__oracle__1", "mini__nop__1"})
    after = _records(run)
    assert after["mini__oracle__1"]["outcome"]["R"] == pytest.approx(0.75)
    assert after["mini__oracle__1"]["started_at"] > first_start  # run again from scratch, in a new job
    logs = sorted(p.name for p in (run / "slurm").glob("*.err"))
    assert len(logs) >= 2 and job["id"] not in {j["id"] for j in slurm_cluster.jobs()}
    assert f"JOB {job['id']} ON localhost CANCELLED" in (run / "slurm" / f"wb-run-{job['id']}.err").read_text()


@pytest.mark.slow
@pytest.mark.slurm
def test_a_matrix_of_a_1_cpu_and_a_2_cpu_task_gets_jobs_of_each_size(tmp_path, slurm_cluster):
    """Each trial's job is its own task's size (not the largest task's): the queue holds a 1-CPU and a 2-CPU
    job, and each task's replay got the cores its job had."""
    import threading

    small = write_task(tmp_path / "small", cpus=1, memory_mb=256)
    big = write_task(tmp_path / "big", cpus=2, memory_mb=512)
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(f'tasks = ["{small}", "{big}"]\nattempts = 1\n[[agents]]\nname = "oracle"\n'
                      'agent = "oracle"\n')
    seen: set[tuple[str, str, str]] = set()
    done = threading.Event()

    def watch() -> None:  # what SLURM was asked for, job by job, while the batch runs (this batch's jobs only)
        while not done.is_set():
            out = slurm_cluster.run("squeue", "-h", "-o", "%i|%j|%C|%m", check=False).stdout
            rows = [line.split("|") for line in out.splitlines() if line.count("|") == 3]
            seen.update((i, cpus, mem) for i, name, cpus, mem in rows if name == "wb-run")
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        res = run_batch(matrix, tmp_path / "run", executor="slurm", workers=1, progress=False, engine="inline",
                        slurm={"walltime": "00:10:00", "partition": slurm_cluster.partition})
    finally:
        done.set()
        watcher.join(5)
    assert res.counts == {"skipped": 0, "complete": 2}, res
    assert "1 job(s) of 1 CPU(s), 768 MB" in res.executor and "1 job(s) of 2 CPU(s), 1024 MB" in res.executor
    sizes = {(cpus, mem) for _, cpus, mem in seen}
    assert sizes == {("1", "768M"), ("2", "1G")}, seen  # one job of each size, none of the largest for both
    cores = {t: len(json.loads((tmp_path / "run" / "trials" / t / "replay" / "provenance.json").read_text())["cores"])
             for t in ("small__oracle__1", "big__oracle__1")}
    assert cores == {"small__oracle__1": 1, "big__oracle__1": 2}, cores


@pytest.mark.parametrize("text,secs", [("01:00:00", 3600), ("10:00", 600), ("90", 5400), ("1-00:00:01", 86401)])
def test_walltimes_and_the_worker_lifetime_inside_them(text, secs):
    from workbench.batch.executors.slurm import parse_walltime, worker_lifetime

    assert parse_walltime(text) == secs
    life, stagger = worker_lifetime(secs)
    assert life + stagger < secs and stagger > 0


def test_slurm_options_need_the_slurm_executor_and_a_sane_walltime(tmp_path):
    from workbench.batch.executors.slurm import parse_walltime
    from workbench.errors import WorkbenchError

    _, matrix = _setup(tmp_path)
    with pytest.raises(WorkbenchError, match="--partition, --walltime need\\(s\\) --executor slurm"):
        run_batch(matrix, tmp_path / "run", slurm={"partition": "p", "walltime": "01:00:00"}, progress=False)
    assert not (tmp_path / "run").exists()
    with pytest.raises(WorkbenchError, match="expected HH:MM:SS"):
        parse_walltime("an hour")
