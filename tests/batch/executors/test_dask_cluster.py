"""The dask executor: a batch on a LocalCluster, and under failure: a worker killed mid-trial, the batch (and
its scheduler) killed then resumed, and a batch joining a separately started `dask scheduler` + `dask worker`
pair. Every outcome is recorded exactly once in trials/ and in the index; a half-written trial is never indexed."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.batch.test_batch import (
    SLOW_SOLUTION,
    _alive_with_mark,
    _assert_exactly_once,
    _records,
    _setup,
    _wait_for_stage,
)
from tests.conftest import REPO
from workbench.batch.run import run_batch
from workbench.errors import WorkbenchError

SLOW_STARTER = "sleep 4\nexit 1\n"  # nop delivers the starter: its replay is slow too
BOTH = {"mini__oracle__1", "mini__nop__1"}


def _slow_task(tmp_path):
    task, matrix = _setup(tmp_path)
    (task / "solution" / "reproduce.sh").write_text(SLOW_SOLUTION)
    (task / "environment" / "starter_submission" / "reproduce.sh").write_text(SLOW_STARTER)
    return task, matrix


def _batch(matrix: Path, run: Path, *extra: str, mark: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "workbench", "batch", str(matrix), "--out", str(run),
                             "--engine", "inline", *extra], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "WORKBENCH_TEST_MARK": mark})


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _children(pid: int) -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(int(p.name)) == pid]


def _dask_workers(batch_pid: int) -> list[int]:
    """The LocalCluster's worker processes: the batch's spawned children (the nannies live in the batch)."""
    return [k for k in _children(batch_pid)
            if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()]


def _indexed(run: Path) -> dict[str, str]:
    """trial id -> status in the run's SQLite index, read while the batch may be writing it."""
    try:
        with sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True, timeout=1) as db:
            return dict(db.execute("select trial_id, status from trials"))
    except sqlite3.Error:
        return {}


@pytest.mark.slow
def test_dask_executor_on_a_local_cluster(tmp_path):
    _, matrix = _setup(tmp_path, attempts=2)
    run = tmp_path / "run"
    res = run_batch(matrix, run, executor="dask", workers=2, engine="inline", progress=False)
    assert res.counts == {"skipped": 0, "complete": 4}
    assert res.dashboard and res.dashboard.startswith("http://127.0.0.1:")
    assert "dask at tcp://127.0.0.1:" in res.executor
    _assert_exactly_once(run, {f"mini__{c}__{a}" for c in ("oracle", "nop") for a in (1, 2)})
    # joining a running scheduler: test_batch_joins_a_separately_started_dask_scheduler_and_worker below
    with pytest.raises(WorkbenchError, match="--scheduler needs --executor dask"):
        run_batch(matrix, tmp_path / "other", scheduler="tcp://127.0.0.1:1", engine="inline", progress=False)
    assert not (tmp_path / "other").exists()  # refused before anything was written


@pytest.mark.slow
def test_a_dask_worker_killed_mid_trial_reruns_it_from_scratch_exactly_once(tmp_path):
    _, matrix = _slow_task(tmp_path)
    run = tmp_path / "run"
    mark = f"dask-worker-kill-{os.getpid()}"
    proc = _batch(matrix, run, "--executor", "dask", "--workers", "1", mark=mark)
    # one worker runs oracle, then nop: kill it in nop's replay, while it also holds oracle's result
    nop_json = run / "trials/mini__nop__1/trial.json"
    _wait_for_stage(nop_json, "replay", proc)
    first = json.loads(nop_json.read_text())
    time.sleep(1.1)  # still in the 4 s replay; the re-run's stamps (1 s resolution) must be later than these
    [worker] = _dask_workers(proc.pid)
    os.kill(worker, signal.SIGKILL)
    seen: set[tuple[str, str]] = set()
    while proc.poll() is None:  # the index while the trial is re-run: never the half-written one
        seen |= set(_indexed(run).items())
        time.sleep(0.05)
    stdout, stderr = proc.communicate()
    assert proc.returncode == 0, stderr
    assert "2 trials (complete 2) on dask at tcp://127.0.0.1:" in stdout
    assert seen <= {("mini__oracle__1", "complete"), ("mini__nop__1", "complete")}, seen
    _assert_exactly_once(run, BOTH)
    after = _records(run)
    assert after["mini__nop__1"]["started_at"] > first["started_at"]  # re-run from scratch
    assert after["mini__nop__1"]["outcome"]["R"] == 0
    assert after["mini__oracle__1"]["outcome"]["R"] == pytest.approx(0.75)
    # oracle's result died with the worker: it was released when it came back, so Dask never recomputed it
    assert "already completed in this batch" not in stderr
    assert _alive_with_mark(mark) == []


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["dask", pytest.param("slurm", marks=[pytest.mark.slurm, pytest.mark.heavy])])
def test_the_scheduler_killed_mid_trial_then_resume_gives_every_outcome_exactly_once(tmp_path, request, executor):
    """SIGKILL of `workbench batch`: the scheduler lives in it (a LocalCluster's, or SLURMCluster's whose jobs
    outlive it); `--resume` keeps oracle, re-runs nop from scratch (or keeps it, completed by the orphaned
    SLURM job meanwhile) and finishes the batch."""
    extra = ["--executor", executor, "--workers", "1"]
    if executor == "slurm":
        cluster = request.getfixturevalue("slurm_cluster")
        extra += ["--walltime", "00:10:00", "--partition", cluster.partition]
    _, matrix = _slow_task(tmp_path)
    run = tmp_path / "run"
    mark = f"scheduler-kill-{executor}-{os.getpid()}"
    proc = _batch(matrix, run, *extra, mark=mark)
    nop_json = run / "trials/mini__nop__1/trial.json"
    _wait_for_stage(nop_json, "replay", proc)
    first = json.loads(nop_json.read_text())
    os.kill(proc.pid, signal.SIGKILL)  # scheduler, nannies, client: gone without a word to the workers
    proc.communicate()
    assert _records(run)["mini__oracle__1"]["status"] == "complete"
    # nop, half-written, never indexed (oracle may not be yet: the batch can die between the worker writing
    # its trial.json and the result reaching the index; the resume rebuilds the index from trials/)
    assert set(_indexed(run).items()) <= {("mini__oracle__1", "complete")}
    if executor == "slurm":
        [orphan] = cluster.jobs()  # still RUNNING: SLURM knows nothing of the dead scheduler

    resumed = _batch(matrix, run, *extra, "--resume", mark=mark)
    stdout, stderr = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, stderr
    assert "resume: 1 kept, 1 interrupted re-run from scratch, 0 not run yet" in stderr
    assert f"2 trials (complete 1, skipped 1) on {executor}" in stdout
    _assert_exactly_once(run, BOTH)
    if executor == "slurm":  # the orphaned job's worker leaves on its own when its scheduler went away
        deadline = time.monotonic() + 30  # the batch can end while the worker is still shutting down
        while cluster.jobs() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert cluster.jobs() == []
        log = (run / "slurm" / f"wb-run-{orphan['id']}.err").read_text()
        assert "Reason: worker-handle-scheduler-connection-broken" in log and "End worker" in log
    after = _records(run)
    if executor == "dask":  # the LocalCluster's workers died with the batch: nop ran again from scratch
        assert after["mini__nop__1"]["started_at"] > first["started_at"]
    else:  # the orphaned job may finish nop before its worker leaves; the resumed batch, waiting on the trial's
        # lock, then finds a complete record written since it planned the job, and keeps it (not run twice)
        assert after["mini__nop__1"]["started_at"] >= first["started_at"]
    assert after["mini__oracle__1"]["outcome"]["R"] == pytest.approx(0.75)
    deadline = time.monotonic() + 10
    while _alive_with_mark(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_with_mark(mark) == []  # no worker of either batch left behind


def _wait_until(pred, what: str, procs: list[subprocess.Popen], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert all(p.poll() is None for p in procs), f"{what}: a process ended early"
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.2)


@pytest.mark.slow
def test_batch_joins_a_separately_started_dask_scheduler_and_worker(tmp_path):
    from distributed import Client

    from tests.conftest import free_port

    _, matrix = _setup(tmp_path)
    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    dask_cli = str(Path(sys.executable).with_name("dask"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # the worker imports this checkout's workbench, as the batch does
    logs = {name: open(tmp_path / f"{name}.log", "w") for name in ("scheduler", "worker")}
    procs = [subprocess.Popen([dask_cli, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--dashboard-address", "127.0.0.1:0", "--no-show"],
                              stdout=logs["scheduler"], stderr=subprocess.STDOUT, env=env, cwd=tmp_path)]
    try:
        procs.append(subprocess.Popen([dask_cli, "worker", addr, "--nworkers", "1", "--nthreads", "1",
                                       "--host", "127.0.0.1", "--no-dashboard", "--local-directory",
                                       str(tmp_path / "dask-worker")],
                                      stdout=logs["worker"], stderr=subprocess.STDOUT, env=env, cwd=tmp_path))
        _wait_until(lambda: "Starting established connection" in (tmp_path / "worker.log").read_text(),
                    "the worker registering", procs)
        run = tmp_path / "run"
        res = subprocess.run([sys.executable, "-m", "workbench", "batch", str(matrix), "--out", str(run),
                              "--executor", "dask", "--scheduler", addr, "--engine", "inline"],
                             cwd=REPO, capture_output=True, text=True, timeout=180)
        assert res.returncode == 0, res.stderr
        assert f"2 trials (complete 2) on dask at {addr}" in res.stdout
        _assert_exactly_once(run, BOTH)
        assert _records(run)["mini__oracle__1"]["outcome"]["R"] == pytest.approx(0.75)
        # the batch left the cluster as it found it: scheduler up, its one worker still there, nothing held
        with Client(addr, timeout=10) as client:
            assert list(client.nthreads().values()) == [1]
            assert client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for fh in logs.values():
            fh.close()
    assert all(p.returncode is not None for p in procs)


def _templates() -> dict[int, int]:
    """Warm-kernel templates running: pid -> parent pid (kernels forked from a template share its command
    line; their parent is the template)."""
    found = {}
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and b"--zygote" in (p / "cmdline").read_bytes():
                found[int(p.name)] = _parent(int(p.name))
        except OSError:
            continue
    return {pid: ppid for pid, ppid in found.items() if ppid not in found}


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        pid = _parent(pid)
        if pid == ancestor:
            return True
    return False


@pytest.mark.slow
def test_dask_workers_run_stage_notebooks_on_their_own_warm_kernels(tmp_path):
    import threading

    _, matrix = _setup(tmp_path, attempts=2)
    before, seen, done = set(_templates()), {}, threading.Event()

    def watch():
        while not done.is_set():
            seen.update({pid: (ppid, _descends_from(ppid, os.getpid()))
                         for pid, ppid in _templates().items() if pid not in before and pid not in seen})
            time.sleep(0.1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        res = run_batch(matrix, tmp_path / "run", executor="dask", workers=2, engine="papermill", progress=False)
    finally:
        done.set()
        watcher.join()
    assert res.counts == {"skipped": 0, "complete": 4}
    for tid in ("mini__oracle__1", "mini__nop__2"):
        assert len(list((tmp_path / "run/trials" / tid / "notebooks").glob("*.ipynb"))) == 4
    workers = {ppid for ppid, _ in seen.values()}
    assert 1 <= len(workers) <= 2 and len(seen) == len(workers), seen  # one template per worker process
    assert all(ours for _, ours in seen.values()) and os.getpid() not in workers  # the batch runs no notebook
    time.sleep(1)
    assert not set(_templates()) - before  # gone with the cluster's workers


def _where(job) -> str:
    """Which worker ran the job (a trial stands still a moment, so small jobs spread over the workers)."""
    from distributed import get_worker

    time.sleep(0.2)
    return get_worker().name


@pytest.fixture
def two_sized_workers():
    """A real scheduler and two workers that advertise different sizes: "small" holds 1 CPU and 2 GB, "big"
    2 CPUs, 4 GB and a GPU; each has two threads, so only the resources keep trials apart."""
    from distributed import Scheduler, SpecCluster, Worker

    spec = {name: {"cls": Worker, "options": {"nthreads": 2, "resources": res}}
            for name, res in (("small", {"cpus": 1, "memory_mb": 2048}),
                              ("big", {"cpus": 2, "memory_mb": 4096, "gpus": 1}))}
    with SpecCluster(workers=spec, scheduler={"cls": Scheduler, "options": {"dashboard_address": ":0"}},
                     asynchronous=False) as cluster:
        yield cluster.scheduler_address


class _Job:
    def __init__(self, task_dir: str):
        self.task_dir = task_dir


def test_each_trial_goes_to_a_worker_of_its_tasks_size_and_a_task_no_worker_holds_is_refused(two_sized_workers):
    from workbench.batch.executors import DaskExecutor, Size

    sizes = {"one-cpu": Size(1, 1024), "two-cpus": Size(2, 3000), "gpu": Size(1, 1024, 1)}
    ex = DaskExecutor(scheduler=two_sized_workers, sizes=sizes)
    try:
        assert "trials sized by worker resources" in ex.describe()
        jobs = [_Job(t) for t in ("one-cpu", "two-cpus", "gpu") for _ in range(4)]
        ran = [(job.task_dir, res) for job, res in ex.map_unordered(_where, jobs)]
    finally:
        ex.close()
    assert len(ran) == 12 and not any(isinstance(r, BaseException) for _, r in ran), ran
    assert {r for t, r in ran if t in ("two-cpus", "gpu")} == {"big"}  # only it holds 2 CPUs, 3 GB or a GPU
    assert {r for t, r in ran if t == "one-cpu"} <= {"small", "big"}
    for too_big, what in ((Size(4, 1024), "4 CPU(s)"), (Size(1, 8192), "8192 MB"), (Size(1, 1024, 2), "2 GPU(s)")):
        with pytest.raises(WorkbenchError, match=f"no Dask worker can hold huge .*{re.escape(what)}.*the workers "
                                                 "offer: cpus=1 memory_mb=2048, cpus=2 gpus=1 memory_mb=4096"):
            DaskExecutor(scheduler=two_sized_workers, sizes={"huge": too_big}).close()


def test_workers_that_advertise_no_resources_run_trials_unsized_and_say_so(tmp_path):
    from distributed import LocalCluster

    from workbench.batch.executors import DaskExecutor, Size

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        ex = DaskExecutor(scheduler=cluster.scheduler_address, sizes={"big": Size(64, 10**6, 8)})
        try:
            assert "trials unsized" in ex.describe()
            assert [res for _, res in ex.map_unordered(_where, [_Job("big")])] == [cluster.workers[0].name]
        finally:
            ex.close()
