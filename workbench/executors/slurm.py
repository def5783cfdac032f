"""Trials on a SLURM cluster: dask-jobqueue's SLURMCluster, one single-threaded Dask worker per SLURM job.

Each job runs one trial at a time and is sized from the batch's tasks (the largest ``[environment] cpus``
and ``memory_mb``, plus the worker's own memory), so a trial always fits the job it lands on. Workers retire
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

from ..errors import WorkbenchError
from .dask_cluster import DaskExecutor
from .protocol import OnState

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


class SlurmExecutor(DaskExecutor):
    name = "slurm"

    def __init__(self, workers: int = 2, scheduler: str | None = None, *, cpus: int = 1, memory_mb: int = 1024,
                 partition: str | None = None, walltime: str = DEFAULT_WALLTIME, lifetime: str | None = None,
                 lifetime_stagger: str | None = None, log_dir: Path | None = None, job_name: str = "workbench"):
        if scheduler:
            raise WorkbenchError("--scheduler joins a running Dask cluster: use --executor dask")
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError:
            raise WorkbenchError("--executor slurm needs dask-jobqueue (pip install dask-jobqueue)") from None
        import dask
        from distributed import Client

        wall = parse_walltime(walltime)
        life, stagger = worker_lifetime(wall)
        life = parse_walltime(lifetime) if lifetime else life
        stagger = parse_walltime(lifetime_stagger) if lifetime_stagger else stagger
        if life + stagger >= wall:
            raise WorkbenchError(f"worker lifetime {life} s + stagger {stagger} s must end before the walltime "
                                 f"({wall} s), or SLURM kills workers in the middle of a trial")
        logging.getLogger("distributed").setLevel(logging.ERROR)
        dask.config.set({"distributed.deploy.lost-worker-timeout": "1s"})  # a lost job is replaced at once
        self.jobs_wanted = workers
        self.cpus, self.memory_mb = cpus, memory_mb + WORKER_MEMORY_MB
        self.walltime, self.lifetime, self.stagger = walltime, life, stagger
        self.partition = partition
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.cluster = SLURMCluster(
                cores=1, processes=1, memory=f"{self.memory_mb}MiB", queue=partition, walltime=walltime,
                job_name=job_name, python=sys.executable, log_directory=str(log_dir) if log_dir else None,
                # one trial at a time per job (cores=1: one worker thread); the job's CPUs are the trial's
                worker_extra_args=["--lifetime", f"{life}s", "--lifetime-stagger", f"{stagger}s"],
                job_cpu=cpus, job_mem=f"{self.memory_mb}M",
                scheduler_options={"dashboard_address": "127.0.0.1:0"})
        except (OSError, RuntimeError, ValueError) as exc:
            raise WorkbenchError(f"cannot start a SLURM cluster: {exc}") from None
        self.client = Client(self.cluster)
        self.workers = workers
        self.state: dict[str, int] = {}

    def describe(self) -> str:
        where = f"partition {self.partition}" if self.partition else "the default partition"
        return (f"slurm ({self.jobs_wanted} job(s) of {self.cpus} CPU(s), {self.memory_mb} MB, walltime "
                f"{self.walltime}, worker lifetime {self.lifetime} s ± {self.stagger} s, {where}; "
                f"scheduler {self.client.scheduler.address})")

    # --- what the queue holds -------------------------------------------------------------------------

    def job_states(self) -> dict[str, str]:
        """This cluster's SLURM jobs still in the queue: job id -> PENDING, RUNNING, COMPLETING, ..."""
        ids = [j.job_id for j in self.cluster.workers.values() if getattr(j, "job_id", None)]
        if not ids:
            return {}
        res = subprocess.run(["squeue", "-h", "-j", ",".join(ids), "-o", "%i %T"], capture_output=True, text=True,
                             timeout=30)
        return dict(line.split(maxsplit=1) for line in res.stdout.splitlines() if line.strip())

    def _tick(self, wanted: int, on_state: OnState | None) -> None:
        # scale() re-creates the jobs of workers that left (lifetime, walltime, scancel, a dead node). It never
        # scales down during a batch: SpecCluster would close any worker, one running a trial included.
        self.cluster.scale(jobs=wanted)
        try:
            states = list(self.job_states().values())
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("squeue failed: %s", exc)
            return
        running = sum(len(v) for v in self.client.processing().values())
        self.state = {"jobs_queued": states.count("PENDING"), "jobs_running": states.count("RUNNING"),
                      "trials_running": running}
        if on_state is not None:
            on_state(self.state)

    def map_unordered(self, fn: Callable, jobs: Iterable[Any],
                      on_state: OnState | None = None) -> Iterator[tuple[Any, Any]]:
        from distributed import as_completed as dask_completed

        futures = {self.client.submit(fn, job, pure=False): job for job in jobs}
        wanted = min(self.jobs_wanted, len(futures))
        done = dask_completed(list(futures))
        last = 0.0
        while futures:
            if done.has_ready():
                for fut in done.next_batch(block=False):
                    yield self._collect(fut, futures)
                continue
            if time.monotonic() - last >= TICK_SEC:
                self._tick(wanted, on_state)
                last = time.monotonic()
            time.sleep(0.1)

    def close(self) -> None:
        self.client.close()
        self.cluster.close()  # scancels every job it submitted
