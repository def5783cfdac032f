"""Trials on a SLURM cluster: dask-jobqueue's SLURMCluster, one single-threaded Dask worker per SLURM job.

Each job runs one trial at a time and is sized to its own task: ``[environment] cpus``, ``memory_mb`` (plus
the worker's own memory) and ``gpus`` (``--gres=gpu:N``). A batch of tasks of several sizes gets one pool of
jobs per size, each its own dask-jobqueue cluster, and each trial is sent to the pool of its task's size: a
mixed matrix never gives every job the largest size. Workers retire
(``--lifetime``, staggered) before the job's walltime, so SLURM never kills a worker that looks healthy;
the executor keeps ``jobs`` jobs in the queue while trials remain, replacing any job that ended (lifetime,
walltime, ``scancel``, a dead node). A trial whose worker died is rescheduled by Dask on another worker and
run again from scratch under the trial's lock (the dead job's processes, if any linger, hold it until they
are gone), so every outcome is recorded once; the index is written by the batch process only when a trial
comes back. The workers must see the same paths as the batch (a shared file system) and the same venv.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ...errors import WorkbenchError
from .protocol import OnState, Size, size_of

log = logging.getLogger(__name__)

WORKER_MEMORY_MB = 512  # the Dask worker and its nanny, on top of the largest task's memory_mb
TICK_SEC = 1.0          # how often queued / running is asked and lost jobs are replaced
DEFAULT_WALLTIME = "01:00:00"


def parse_walltime(text: str) -> int:
    """SLURM's [D-]HH:MM:SS (or MM:SS, or minutes) in seconds."""
    try:
        days, _, rest = text.rpartition("-")
        parts = [int(p) for p in rest.split(":")]
        if not 1 <= len(parts) <= 3 or any(p < 0 for p in parts):
            raise ValueError
        if len(parts) == 1:
            secs = parts[0] * 60
        else:
            h, m, s = ([0] * (3 - len(parts)) + parts)
            secs = h * 3600 + m * 60 + s
        secs += int(days) * 86400 if days else 0
    except ValueError:
        raise WorkbenchError(f"--walltime {text!r}: expected HH:MM:SS (or D-HH:MM:SS)") from None
    if secs <= 0:
        raise WorkbenchError(f"--walltime {text!r} must be positive")
    return secs


def worker_lifetime(walltime_sec: int) -> tuple[int, int]:
    """(lifetime, stagger) in seconds: retire a worker a margin before the walltime (a tenth of it, at least
    20 s), the stagger inside that margin, so workers of jobs started together do not all leave at once."""
    margin = max(20, walltime_sec // 10)
    if margin >= walltime_sec:
        raise WorkbenchError(f"a walltime of {walltime_sec} s leaves no time for a trial; give at least 00:01:00")
    return walltime_sec - margin, margin // 2


class _Pool:
    """The jobs of one size: a dask-jobqueue SLURMCluster (its own scheduler) and a client on it."""

    def __init__(self, size: Size, *, partition, walltime, life, stagger, log_dir, job_name):
        from dask_jobqueue import SLURMCluster
        from distributed import Client

        self.size = size
        memory = size.memory_mb + WORKER_MEMORY_MB
        try:
            self.cluster = SLURMCluster(
                cores=1, processes=1, memory=f"{memory}MiB", queue=partition, walltime=walltime,
                job_name=job_name, python=sys.executable, log_directory=str(log_dir) if log_dir else None,
                # one trial at a time per job (cores=1: one worker thread); the job's CPUs are the trial's
                worker_extra_args=["--lifetime", f"{life}s", "--lifetime-stagger", f"{stagger}s"],
                job_cpu=size.cpus, job_mem=f"{memory}M",
                job_extra_directives=[f"--gres=gpu:{size.gpus}"] if size.gpus else [],
                scheduler_options={"dashboard_address": "127.0.0.1:0"})
        except (OSError, RuntimeError, ValueError) as exc:
            raise WorkbenchError(f"cannot start a SLURM cluster: {exc}") from None
        self.client = Client(self.cluster)
        self.futures: dict = {}
        self.done = None
        self.wanted = 0

    def job_ids(self) -> list[str]:
        return [j.job_id for j in self.cluster.workers.values() if getattr(j, "job_id", None)]

    def close(self) -> None:
        self.client.close()
        self.cluster.close()  # scancels every job it submitted


class SlurmExecutor:
    name = "slurm"

    def __init__(self, workers: int = 2, scheduler: str | None = None, *, cpus: int = 1, memory_mb: int = 1024,
                 gpus: int = 0, sizes: dict[str, Size] | None = None, partition: str | None = None,
                 walltime: str = DEFAULT_WALLTIME, lifetime: str | None = None, lifetime_stagger: str | None = None,
                 log_dir: Path | None = None, job_name: str = "workbench"):
        """
        Args:
            workers: jobs kept in the queue per size while its trials remain.
            scheduler: refused (it joins a running Dask cluster: ``--executor dask``).
            cpus, memory_mb, gpus: the size of a job whose task is not in ``sizes``.
            sizes: each task directory's job size (its ``[environment]``).
            partition, walltime, lifetime, lifetime_stagger: SLURM's partition and walltime, the workers'
                lifetime before it (staggered).
            log_dir: where the jobs' logs go; job_name: their name in the queue.
        """
        if scheduler:
            raise WorkbenchError("--scheduler joins a running Dask cluster: use --executor dask")
        try:
            import dask_jobqueue  # noqa: F401
        except ImportError:
            raise WorkbenchError("--executor slurm needs dask-jobqueue (pip install dask-jobqueue)") from None
        import dask

        wall = parse_walltime(walltime)
        life, stagger = worker_lifetime(wall)
        life = parse_walltime(lifetime) if lifetime else life
        stagger = parse_walltime(lifetime_stagger) if lifetime_stagger else stagger
        if life + stagger >= wall:
            raise WorkbenchError(f"worker lifetime {life} s + stagger {stagger} s must end before the walltime "
                                 f"({wall} s), or SLURM kills workers in the middle of a trial")
        logging.getLogger("distributed").setLevel(logging.ERROR)
        dask.config.set({"distributed.deploy.lost-worker-timeout": "1s"})  # a lost job is replaced at once
        self.jobs_wanted = self.workers = workers
        self.default = Size(cpus, memory_mb, gpus)
        self.sizes = dict(sizes or {})
        self.walltime, self.lifetime, self.stagger = walltime, life, stagger
        self.partition = partition
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
        self.pools: dict[Size, _Pool] = {}
        try:
            for size in sorted(set(self.sizes.values()) or {self.default}):
                self.pools[size] = _Pool(size, partition=partition, walltime=walltime, life=life, stagger=stagger,
                                         log_dir=log_dir, job_name=job_name)
        except BaseException:
            self.close()
            raise
        self.state: dict[str, int] = {}

    @property
    def dashboard(self) -> str | None:
        return next(iter(self.pools.values())).client.dashboard_link if self.pools else None

    def size_of(self, job: Any) -> Size:
        return size_of(job, self.sizes, self.default)

    def describe(self) -> str:
        where = f"partition {self.partition}" if self.partition else "the default partition"
        pools = " and ".join(f"{self.jobs_wanted} job(s) of {size.cpus} CPU(s), {size.memory_mb + WORKER_MEMORY_MB} MB"
                             + (f", {size.gpus} GPU(s)" if size.gpus else "") for size in self.pools)
        return (f"slurm ({pools}, walltime {self.walltime}, worker lifetime {self.lifetime} s ± {self.stagger} s, "
                f"{where})")

    # --- what the queue holds -------------------------------------------------------------------------

    def job_states(self) -> dict[str, str]:
        """This executor's SLURM jobs still in the queue: job id -> PENDING, RUNNING, COMPLETING, ..."""
        ids = [i for pool in self.pools.values() for i in pool.job_ids()]
        if not ids:
            return {}
        res = subprocess.run(["squeue", "-h", "-j", ",".join(ids), "-o", "%i %T"], capture_output=True, text=True,
                             timeout=30)
        return dict(line.split(maxsplit=1) for line in res.stdout.splitlines() if line.strip())

    def _tick(self, on_state: OnState | None) -> None:
        # scale() re-creates the jobs of workers that left (lifetime, walltime, scancel, a dead node). It never
        # scales down during a batch: SpecCluster would close any worker, one running a trial included.
        for pool in self.pools.values():
            if pool.wanted:
                pool.cluster.scale(jobs=pool.wanted)
        try:
            states = list(self.job_states().values())
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("squeue failed: %s", exc)
            return
        running = sum(len(v) for pool in self.pools.values() for v in pool.client.processing().values())
        self.state = {"jobs_queued": states.count("PENDING"), "jobs_running": states.count("RUNNING"),
                      "trials_running": running}
        if on_state is not None:
            on_state(self.state)

    def map_unordered(self, fn: Callable, jobs: Iterable[Any],
                      on_state: OnState | None = None) -> Iterator[tuple[Any, Any]]:
        """Each job on a worker of its task's size; (job, result or exception) as they finish."""
        from distributed import as_completed as dask_completed

        from .dask_cluster import DaskExecutor

        for job in jobs:
            pool = self.pools.get(self.size_of(job))
            if pool is None:
                raise WorkbenchError(f"no SLURM job size for {getattr(job, 'task_dir', job)}")
            pool.futures[pool.client.submit(fn, job, pure=False)] = job
        for pool in self.pools.values():
            pool.wanted = min(self.jobs_wanted, len(pool.futures))
            pool.done = dask_completed(list(pool.futures)) if pool.futures else None
        last = 0.0
        while any(pool.futures for pool in self.pools.values()):
            ready = False
            for pool in self.pools.values():
                if pool.done is not None and pool.futures and pool.done.has_ready():
                    ready = True
                    for fut in pool.done.next_batch(block=False):
                        yield DaskExecutor._collect(fut, pool.futures)
                    if not pool.futures:  # its last trial came back: its idle jobs give their nodes to the others
                        pool.wanted = 0
                        pool.cluster.scale(jobs=0)
            if ready:
                continue
            if time.monotonic() - last >= TICK_SEC:
                self._tick(on_state)
                last = time.monotonic()
            time.sleep(0.1)

    def abort(self) -> None:
        self.close()

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close()
        self.pools = {}
