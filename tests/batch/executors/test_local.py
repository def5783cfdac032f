"""The local pool (the default executor): every job comes back once, with its result or its exception; a
``--scheduler`` is refused; abort stops running trials; and the workers die with the batch."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from tests.conftest import REPO
from workbench.batch.executors import EXECUTORS, LocalExecutor, get_executor
from workbench.errors import WorkbenchError


def _alive(pid: int) -> bool:
    """A process that runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def _gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_every_job_comes_back_once_with_its_result_or_its_exception():
    ex = LocalExecutor(workers=2)
    try:
        got = list(ex.map_unordered(math.sqrt, [4, 9, -1, 16]))
    finally:
        ex.close()
    assert sorted(job for job, _ in got) == [-1, 4, 9, 16]  # each job once, in whatever order it finished
    results = dict(got)
    assert (results[4], results[9], results[16]) == (2.0, 3.0, 4.0)
    assert isinstance(results[-1], ValueError)  # a job that raised is handed back, the others still run


def test_the_registry_names_the_three_executors_and_refuses_a_fourth():
    assert set(EXECUTORS) == {"local", "dask", "slurm"}
    ex = get_executor("local", 1)
    try:
        assert isinstance(ex, LocalExecutor) and ex.describe() == "local pool of 1 worker process(es)"
    finally:
        ex.close()
    with pytest.raises(WorkbenchError, match="unknown executor 'pbs'; known: dask, local, slurm"):
        get_executor("pbs", 1)


def test_a_scheduler_is_refused_before_any_worker_starts():
    with pytest.raises(WorkbenchError, match="--scheduler needs --executor dask"):
        LocalExecutor(workers=1, scheduler="tcp://127.0.0.1:8786")


def test_abort_kills_running_trials_at_once():
    ex = LocalExecutor(workers=2)
    futures = [ex.pool.submit(time.sleep, 60) for _ in range(3)]
    deadline = time.monotonic() + 30
    while len(ex.pool._processes) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = list(ex.pool._processes)
    assert len(workers) == 2
    t0 = time.monotonic()
    ex.abort()
    assert time.monotonic() - t0 < 5
    assert _gone_within(workers, 5)
    for fut in futures:  # the running ones killed, the queued one never run: none finishes its minute
        assert fut.cancelled() or isinstance(fut.exception(timeout=10), BrokenProcessPool)


KILLED_BATCH = """
import sys, time
from workbench.batch.executors.local import LocalExecutor
ex = LocalExecutor(workers=1)
ex.pool.submit(time.sleep, 120)
while not ex.pool._processes:
    time.sleep(0.02)
print(*ex.pool._processes, flush=True)
time.sleep(120)
"""


def test_workers_die_with_a_batch_killed_by_sigkill():
    """No worker outlives the batch to keep writing into a trial a resumed batch is about to re-run."""
    proc = subprocess.Popen([sys.executable, "-c", KILLED_BATCH], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        workers = [int(p) for p in proc.stdout.readline().split()]
        assert len(workers) == 1 and _alive(workers[0])
        os.kill(proc.pid, signal.SIGKILL)  # no finally, no atexit: only the kernel can tell the worker
        proc.wait(10)
        assert _gone_within(workers, 5)
    finally:
        proc.kill()
        proc.wait()
