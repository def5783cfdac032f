"""Trials on a Dask cluster: a LocalCluster of single-threaded worker processes, or an existing
scheduler (``--scheduler tcp://...``) whose workers see the same paths and venv as the batch."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import WorkbenchError
from .protocol import OnState

CONNECT_TIMEOUT_SEC = 10.0


class DaskExecutor:
    """A LocalCluster by default; ``scheduler`` joins an existing cluster (same paths and venv on workers)."""

    name = "dask"

    def __init__(self, workers: int = 2, scheduler: str | None = None):
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

    @property
    def dashboard(self) -> str | None:
        return self.client.dashboard_link

    def describe(self) -> str:
        where = self.client.scheduler.address if self.client.scheduler else "?"
        return f"dask at {where} (dashboard {self.dashboard})"

    def map_unordered(self, fn: Callable, jobs: Iterable[Any],
                      on_state: OnState | None = None) -> Iterator[tuple[Any, Any]]:
        from distributed import as_completed as dask_completed

        futures = {self.client.submit(fn, job, pure=False): job for job in jobs}
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
