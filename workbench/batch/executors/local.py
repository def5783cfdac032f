"""The default executor: a pool of spawned processes on this machine.

Its workers die with the batch (PR_SET_PDEATHSIG), so a batch killed with SIGKILL leaves no worker writing
into a trial the resumed batch is about to re-run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from typing import Any

from ...errors import WorkbenchError
from .protocol import OnState


def _worker_init(parent: int) -> None:
    from ...jupyter.kernel import die_with_parent

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

    def map_unordered(self, fn: Callable, jobs: Iterable[Any],
                      on_state: OnState | None = None) -> Iterator[tuple[Any, Any]]:
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
