"""Trials on a Dask cluster: a LocalCluster of single-threaded worker processes, or an existing
scheduler (``--scheduler tcp://...``) whose workers see the same paths and venv as the batch.

Trials are sized to their tasks through Dask's worker resources: where the cluster's workers advertise
``cpus``, ``memory_mb`` or ``gpus`` (``dask worker --resources "cpus=8,memory_mb=32000,gpus=1"``), each trial
asks for its own task's amounts of those, so a worker runs a big trial alone and several small ones at once,
and a GPU task goes only to a worker with a GPU. A task no worker can hold is refused in one line before any
trial starts. Workers that advertise none run trials unsized (each trial's sandbox still reserves its cores
and refuses a host without what its task needs); a LocalCluster is this host, which the batch has checked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...errors import WorkbenchError
from .protocol import OnState, Size, size_of

CONNECT_TIMEOUT_SEC = 10.0
RESOURCES = ("cpus", "memory_mb", "gpus")  # the worker resources a trial's size is asked in (Size's fields)


class DaskExecutor:
    """A LocalCluster by default; ``scheduler`` joins an existing cluster (same paths and venv on workers)."""

    name = "dask"

    def __init__(self, workers: int = 2, scheduler: str | None = None, *, sizes: dict[str, Size] | None = None,
                 default: Size | None = None):
        """
        Args:
            workers: worker processes of the LocalCluster (ignored with ``scheduler``).
            scheduler: a running scheduler's address to join instead of starting a LocalCluster.
            sizes: each task directory's size (its ``[environment]``), asked of workers that advertise resources.
            default: the size of a job whose task is not in ``sizes`` (1 CPU, 1024 MB).

        Raises:
            WorkbenchError: the scheduler cannot be reached, or no worker can hold one of ``sizes``.
        """
        from distributed import Client, LocalCluster

        logging.getLogger("distributed").setLevel(logging.ERROR)  # its INFO lines would break the progress bar
        self.cluster = None
        if scheduler:
            try:
                self.client = Client(scheduler, timeout=CONNECT_TIMEOUT_SEC)
            except (OSError, TimeoutError) as exc:
                raise WorkbenchError(f"cannot reach the Dask scheduler at {scheduler} within "
                                     f"{CONNECT_TIMEOUT_SEC:g} s ({type(exc).__name__}); is it running?") from None
        else:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                        silence_logs=logging.ERROR, dashboard_address="127.0.0.1:0")
            self.client = Client(self.cluster)
        self.workers = workers
        self.sizes, self.default = dict(sizes or {}), default or Size(1, 1024)
        self.offered = self._offered() if scheduler else {}
        if self.offered:
            try:
                self._check_fits()
            except WorkbenchError:
                self.close()
                raise

    def _offered(self) -> dict[str, dict[str, float]]:
        """Worker address -> the sizing resources it advertises (empty where none advertises any)."""
        workers = self.client.scheduler_info().get("workers", {})
        offered = {addr: {k: v for k, v in (w.get("resources") or {}).items() if k in RESOURCES}
                   for addr, w in workers.items()}
        return offered if any(offered.values()) else {}

    def _check_fits(self) -> None:
        for task, size in sorted(self.sizes.items(), key=lambda kv: kv[1], reverse=True):
            need = self.resources(size)
            if not any(all(have.get(k, 0) >= v for k, v in need.items()) for have in self.offered.values()):
                best = ", ".join(sorted({" ".join(f"{k}={v:g}" for k, v in sorted(h.items()))
                                         for h in self.offered.values()}))
                raise WorkbenchError(f"no Dask worker can hold {task} ({size}); the workers offer: {best}")

    def resources(self, size: Size) -> dict[str, float]:
        """What a trial of ``size`` asks of a worker: its nonzero amounts (a GPU only where it needs one)."""
        return {k: getattr(size, k) for k in RESOURCES if getattr(size, k)}

    @property
    def dashboard(self) -> str | None:
        return self.client.dashboard_link

    def describe(self) -> str:
        where = self.client.scheduler.address if self.client.scheduler else "?"
        sized = ("trials sized by worker resources" if self.offered else
                 "trials unsized: the workers advertise no cpus, memory_mb or gpus resources" if self.cluster is None
                 else "this host's LocalCluster")
        return f"dask at {where} (dashboard {self.dashboard}; {sized})"

    def map_unordered(self, fn: Callable, jobs: Iterable[Any],
                      on_state: OnState | None = None) -> Iterator[tuple[Any, Any]]:
        from distributed import as_completed as dask_completed

        def submit(job):
            if not self.offered:
                return self.client.submit(fn, job, pure=False)
            return self.client.submit(fn, job, pure=False,
                                      resources=self.resources(size_of(job, self.sizes, self.default)))

        futures = {submit(job): job for job in jobs}
        for fut in dask_completed(list(futures)):
            yield self._collect(fut, futures)

    @staticmethod
    def _collect(fut, futures: dict) -> tuple[Any, Any]:
        """(job, result or exception) of a finished future, released at once: Dask recomputes a result it
        still holds a future for when the worker holding it dies, and a finished trial recomputed is a trial
        run twice (its second run only finds it complete, but it takes a worker and a trial lock)."""
        job = futures.pop(fut)
        try:
            res = fut.result()
        except Exception as exc:  # the trial raised, or its worker died too often (KilledWorker)
            res = exc
        fut.release()
        return job, res

    def abort(self) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
