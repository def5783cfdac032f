"""Exclusive CPU cores for sandboxes, shared by every workbench process on the host.

Two replays pinned to the same cores with OpenMP threads slow each other ~10x (measured: the demo
replay took 89 s instead of 7.5 s with two trials on 2 cores), which distorts recorded wall times and
can time a replay out for its neighbour's sake. So a sandbox reserves ``cpus`` cores with one flock
per core and queues until they are free; the queueing time is recorded, not charged to the replay.

One exception: a session whose agent is blocked on the hidden scoring service (a CLI agent waiting on its
HTTP call) holds its cores while the service replays its candidate, and on a machine with as many cores as
sessions that replay would wait for ever. The service's thread therefore *borrows* the waiting owner's
cores (:func:`borrowing`): the owner's sandbox is idle meanwhile and its clock is paused, so the replay
still runs alone on them.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

POLL_SEC = 0.1
log = logging.getLogger(__name__)
_holdings: dict[str, list[int]] = {}  # owner -> the cores its running sandbox holds (this process)
_local = threading.local()  # the cores this thread borrowed, while it works for their owner


def lock_dir() -> Path:
    return shared_lock_dir("WORKBENCH_CPU_LOCKS", "/tmp/workbench-cpu-locks")


def shared_lock_dir(variable: str, default: str) -> Path:
    """A directory of lock files every workbench process on the host shares (``variable`` overrides
    ``default``): made sticky and world-writable, so sandboxes of any user reserve through it."""
    d = Path(os.environ.get(variable, default))
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
def reserve_cpus(n: int, owner: str | None = None) -> Iterator[list[int]]:
    """Hold ``n`` cores (at most all the cores this process may use) exclusively; yields their ids.

    Args:
        n: how many cores.
        owner: whose they are while held (a session's workspace), so a thread working for it can borrow them.
    """
    allowed = sorted(os.sched_getaffinity(0))
    n = max(1, min(n, len(allowed)))
    lent = getattr(_local, "cores", None)
    if lent and len(lent) >= n:  # this thread works for an owner that waits on it: its idle cores, no lock
        yield lent[:n]
        return
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
        if owner is not None:
            _holdings[owner] = sorted(held)
        yield sorted(held)
    finally:
        if owner is not None:
            _holdings.pop(owner, None)
        for fd in held.values():
            os.close(fd)


@contextmanager
def borrowing(owner: str | None) -> Iterator[list[int] | None]:
    """While in this block, this thread's sandboxes run on the cores ``owner``'s running sandbox holds (if it
    holds any): for work the owner is blocked on, such as the scoring service replaying a waiting session's
    candidate. Yields the borrowed cores, or None (then sandboxes reserve cores as usual)."""
    cores = _holdings.get(owner) if owner else None
    _local.cores = cores
    try:
        yield cores
    finally:
        _local.cores = None
