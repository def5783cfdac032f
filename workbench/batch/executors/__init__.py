"""Where trials run: a local process pool (default), a Dask cluster, or SLURM jobs through dask-jobqueue.
One registry, name -> class; every executor follows :class:`.protocol.Executor`."""

from __future__ import annotations

from typing import Any

from ...errors import lookup
from .dask_cluster import DaskExecutor
from .local import LocalExecutor
from .protocol import Executor, OnState, Size
from .slurm import SlurmExecutor

__all__ = ["EXECUTORS", "DaskExecutor", "Executor", "LocalExecutor", "OnState", "Size", "SlurmExecutor", "get_executor"]

EXECUTORS: dict[str, type] = {"local": LocalExecutor, "dask": DaskExecutor, "slurm": SlurmExecutor}


def get_executor(name: str, workers: int, scheduler: str | None = None, **options: Any) -> Executor:
    """``options`` are the executor's own (the slurm executor's partition, walltime, job size, ...)."""
    cls = lookup(EXECUTORS, "executor", name)
    return cls(workers=workers, scheduler=scheduler, **options)
