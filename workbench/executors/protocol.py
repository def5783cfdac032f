"""What every executor offers the batch: ``map_unordered`` over trial jobs, ``abort`` and ``close``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

OnState = Callable[[dict[str, int]], None]
"""Called by an executor with a queue of its own while it waits: ``{"jobs_queued": n, ...}``."""


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
