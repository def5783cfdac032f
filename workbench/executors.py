"""Where trials run: a local process pool (default) or a Dask cluster. One registry, name -> class.

Both expose ``map_unordered(fn, jobs)`` yielding ``(job, result_or_exception)`` as trials finish.
Local workers are spawned processes that die with the batch (PR_SET_PDEATHSIG), so a batch killed
with SIGKILL leaves no worker writing into a trial the resumed batch is about to re-run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from typing import Any

from .errors import WorkbenchError

log = logging.getLogger(__name__)
CONNECT_TIMEOUT_SEC = 10.0


def _worker_init(parent: int) -> None:
    from .kernel import die_with_parent

    die_with_parent(parent)


class LocalExecutor:
    name = "local"

    def __init__(self, workers: int = 2, scheduler: str | None = None):
        if scheduler:
            raise WorkbenchError("--scheduler needs --executor dask")
        self.workers = workers
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                                        initializer=_worker_init, initargs=(os.getpid(),))

    def describe(self) -> str:
        return f"local pool of {self.workers} worker process(es)"

    def map_unordered(self, fn: Callable, jobs: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        futures = {self.pool.submit(fn, job): job for job in jobs}
        for fut in as_completed(futures):
            exc = fut.exception()
            yield futures[fut], exc if exc is not None else fut.result()

    def abort(self) -> None:
        for proc in list(getattr(self.pool, "_processes", {}).values()):
            proc.kill()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self.pool.shutdown(wait=True)


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

    def map_unordered(self, fn: Callable, jobs: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        from distributed import as_completed as dask_completed

        futures = {}
        for job in jobs:
            futures[self.client.submit(fn, job, pure=False)] = job
        for fut in dask_completed(list(futures)):
            try:
                yield futures[fut], fut.result()
            except Exception as exc:  # the worker raised or died
                yield futures[fut], exc

    def abort(self) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


EXECUTORS: dict[str, type] = {"local": LocalExecutor, "dask": DaskExecutor}


def get_executor(name: str, workers: int, scheduler: str | None = None):
    try:
        cls = EXECUTORS[name]
    except KeyError:
        raise WorkbenchError(f"unknown executor {name!r}; known: {', '.join(sorted(EXECUTORS))}") from None
    return cls(workers=workers, scheduler=scheduler)
