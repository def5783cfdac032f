"""Exclusive CPU cores for sandboxes, shared by every workbench process on the host.

Two replays pinned to the same cores with OpenMP threads slow each other ~10x (measured: the demo
replay took 89 s instead of 7.5 s with two trials on 2 cores), which distorts recorded wall times and
can time a replay out for its neighbour's sake. So a sandbox reserves ``cpus`` cores with one flock
per core and queues until they are free; the queueing time is recorded, not charged to the replay.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

POLL_SEC = 0.1
log = logging.getLogger(__name__)


def lock_dir() -> Path:
    d = Path(os.environ.get("WORKBENCH_CPU_LOCKS", "/tmp/workbench-cpu-locks"))
    if not d.is_dir():
        d.mkdir(parents=True, exist_ok=True)
        try:
            os.chmod(d, 0o1777)
        except PermissionError:
            pass
    return d


def _try_lock(path: Path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        os.close(fd)
        return None


@contextmanager
def reserve_cpus(n: int) -> Iterator[list[int]]:
    """Hold ``n`` cores (at most all the cores this process may use) exclusively; yields their ids."""
    allowed = sorted(os.sched_getaffinity(0))
    n = max(1, min(n, len(allowed)))
    d = lock_dir()
    held: dict[int, int] = {}
    waiting_since = None
    try:
        while True:
            for cpu in allowed:
                if len(held) == n:
                    break
                if cpu not in held and (fd := _try_lock(d / f"cpu{cpu}.lock")) is not None:
                    held[cpu] = fd
            if len(held) == n:
                break
            if waiting_since is None:  # said once, while it happens (the stage's time includes it)
                waiting_since = time.monotonic()
                log.warning("waiting for %d free core(s): other workbench sandboxes hold them", n)
            for fd in held.values():  # never sit on a partial set: that is how deadlocks start
                os.close(fd)
            held.clear()
            time.sleep(POLL_SEC)
        if waiting_since is not None:
            log.warning("got core(s) %s after waiting %.1f s", sorted(held), time.monotonic() - waiting_since)
        yield sorted(held)
    finally:
        for fd in held.values():
            os.close(fd)
