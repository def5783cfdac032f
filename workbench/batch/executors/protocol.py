"""What every executor offers the batch: ``map_unordered`` over trial jobs, ``abort`` and ``close``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

OnState = Callable[[dict[str, int]], None]
"""Called by an executor with a queue of its own while it waits: ``{"jobs_queued": n, ...}``."""


@dataclass(frozen=True, order=True)
class Size:
    """What one trial asks of where it runs: its task's cores, memory and GPUs (``[environment]``)."""

    cpus: int
    memory_mb: int
    gpus: int = 0

    def __str__(self) -> str:
        return f"{self.cpus} CPU(s), {self.memory_mb} MB" + (f", {self.gpus} GPU(s)" if self.gpus else "")


def size_of(job: Any, sizes: dict[str, Size], default: Size) -> Size:
    """The size of a trial job: its task directory's, else ``default``."""
    return sizes.get(str(getattr(job, "task_dir", "")), default)


class Executor(Protocol):
    name: str
    workers: int

    def describe(self) -> str: ...

    def map_unordered(self, fn: Callable, jobs: Iterable[Any], on_state: OnState | None = None
                      ) -> Iterator[tuple[Any, Any]]:
        """``(job, result_or_exception)`` as trials finish, in any order."""
        ...

    def abort(self) -> None: ...

    def close(self) -> None: ...
