"""GPUs for sandboxes: none unless a task asks, and then exactly the ones reserved for it, one holder each.

Default-deny (EurekAgent's permission engineering, seed 003 §3.2): a sandbox's ``/dev`` is bwrap's minimal
one (or a container's), so a task without ``[environment] gpus`` sees no GPU at all. A task with ``gpus = N``
gets N of the host's GPUs reserved exclusively, like cores (:mod:`.cpus`): one flock per physical GPU,
shared by every workbench process on the host, so two replays never share a GPU and its memory; the lock
file names its holder while held. The sandbox then gets those devices' nodes (``/dev/nvidiaN``) and the
driver's control nodes (``nvidiactl``, ``nvidia-uvm``...) and nothing else; ``CUDA_VISIBLE_DEVICES`` and
``NVIDIA_VISIBLE_DEVICES`` are set by the workbench. The driver's user-space libraries come with the host's
read-only ``/usr`` under bwrap, and with the NVIDIA container runtime under docker where the engine has it.

GPUs are found as the driver names their nodes: ``/dev/nvidia<minor>`` character devices
(``WORKBENCH_GPU_DEV``: another directory, for tests that make such nodes). Where NVML answers
(``pynvml``), each reserved GPU's name, UUID, memory peak and busy time during the run are recorded;
otherwise the record says they were not measured. A host without the GPUs a task needs is refused in one
line before any work (:func:`require`). An agent session holds its task's GPUs only between acquiring and
releasing them (:class:`Lease`, EurekAgent's GPU helper API), through the same locks.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..errors import WorkbenchError
from .cpus import shared_lock_dir

POLL_SEC = 0.2
_local = threading.local()  # GPUs this thread's sandboxes borrow (:func:`lending`)
CONTROL_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
log = logging.getLogger(__name__)


class GpusBusy(WorkbenchError):
    """The GPUs asked for stayed held by others for as long as the caller would wait."""


@dataclass(frozen=True)
class Gpu:
    """One physical GPU as the driver exposes it: its node (``/dev/nvidia<minor>``) and minor number."""

    minor: int
    node: str  # the host path of its device node
    target: str  # where the sandbox sees it (/dev/nvidia<minor>)


@dataclass
class Held:
    """GPUs a sandbox holds: their nodes, the control nodes, and what NVML measured of them."""

    gpus: list[Gpu] = field(default_factory=list)
    control: list[tuple[str, str]] = field(default_factory=list)  # (host node, sandbox path)
    owner: str = ""
    waited_sec: float = 0.0
    _nvml: object | None = None

    def binds(self) -> list[tuple[str, str]]:
        """(host node, sandbox path) of every device node the sandbox gets."""
        return [(g.node, g.target) for g in self.gpus] + self.control if self.gpus else []

    def env(self) -> dict[str, str]:
        """The variables that say which GPUs there are: set by the workbench, empty when none."""
        ids = ",".join(str(i) for i in range(len(self.gpus)))
        return {"CUDA_VISIBLE_DEVICES": ids, "NVIDIA_VISIBLE_DEVICES": ids or "void"}

    def record(self) -> list[dict]:
        """For the provenance: each GPU's node, its lock's holder and what NVML measured (if it could)."""
        measured = _nvml_end(self._nvml) if self._nvml is not None else {}
        return [{"node": g.target, "host_node": g.node, "minor": g.minor, "lock_owner": self.owner,
                 **measured.get(g.minor, {"measured": "no NVML on this host (pynvml): memory and busy time "
                                                     "not measured"})} for g in self.gpus]


def dev_dir() -> Path:
    return Path(os.environ.get("WORKBENCH_GPU_DEV", "/dev"))


def inventory() -> tuple[list[Gpu], list[tuple[str, str]]]:
    """The host's GPUs (character devices named ``nvidia<minor>``) and the driver's control nodes present."""
    d = dev_dir()
    gpus, control = [], []
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return [], []
    for name in names:
        path = d / name
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISCHR(st.st_mode):
            continue
        if m := re.fullmatch(r"nvidia(\d+)", name):
            gpus.append(Gpu(minor=int(m.group(1)), node=str(path), target=f"/dev/{name}"))
        elif name in CONTROL_NODES:
            control.append((str(path), f"/dev/{name}"))
    return sorted(gpus, key=lambda g: g.minor), control


def require(n: int, what: str) -> None:
    """Refuse, in one line and before any work, ``what`` (a task) needing ``n`` GPUs on a host with fewer."""
    if n <= 0:
        return
    have, _ = inventory()
    if len(have) < n:
        found = f"{len(have)} ({', '.join(g.node for g in have)})" if have else f"none (no {dev_dir()}/nvidia0)"
        raise WorkbenchError(f"{what} needs {n} GPU(s) ([environment] gpus = {n}); this host has {found}. "
                             "Run it on a host with the GPUs; it is never run on the CPU instead")


def lock_dir() -> Path:
    return shared_lock_dir("WORKBENCH_GPU_LOCKS", "/tmp/workbench-gpu-locks")


def lock_owner(minor: int) -> str | None:
    """Who holds GPU ``minor`` now (its lock file's content), or None when it is free."""
    path = lock_dir() / f"gpu{minor}.lock"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 512, 0).decode(errors="replace").strip() or "?"
        return None
    finally:
        os.close(fd)


@contextmanager
def reserve(n: int, owner: str, wait_sec: float | None = None) -> Iterator[Held]:
    """Hold ``n`` of the host's GPUs exclusively (waiting until they are free); yields them. ``n`` = 0 holds
    nothing and yields an empty :class:`Held` (the sandbox then sees no GPU).

    Args:
        n: how many GPUs.
        owner: who holds them, written into each lock file while held (a trial, a session).
        wait_sec: give up after this long, naming who holds them (None: wait as long as it takes).

    Raises:
        GpusBusy: ``wait_sec`` passed with the GPUs still held by others.
    """
    if n <= 0:
        yield Held()
        return
    require(n, "this sandbox")
    gpus, control = inventory()
    d = lock_dir()
    held: dict[int, int] = {}
    t0, said = time.monotonic(), False
    label = f"{owner} (pid {os.getpid()}, since {time.strftime('%Y-%m-%dT%H:%M:%S')})"
    try:
        while True:
            for g in gpus:
                if len(held) == n:
                    break
                if g.minor in held:
                    continue
                try:  # never through a link planted in the shared directory: the holder's name is written here
                    fd = os.open(d / f"gpu{g.minor}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
                except OSError as exc:
                    raise WorkbenchError(f"GPU lock {d / f'gpu{g.minor}.lock'}: {exc.strerror}") from None
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        raise WorkbenchError(f"GPU lock {d / f'gpu{g.minor}.lock'} is not a regular file")
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                except BaseException:
                    os.close(fd)
                    raise
                os.ftruncate(fd, 0)
                os.pwrite(fd, label.encode(), 0)
                held[g.minor] = fd
            if len(held) == n:
                break
            if wait_sec is not None and time.monotonic() - t0 >= wait_sec:
                holders = sorted({o for g in gpus if g.minor not in held and (o := lock_owner(g.minor))})
                raise GpusBusy(f"{n} GPU(s) not free after {wait_sec:g} s; held by: " + ("; ".join(holders) or "?"))
            if not said:
                said = True
                log.warning("waiting for %d free GPU(s): other workbench sandboxes hold them", n)
            for fd in held.values():  # never sit on a partial set
                os.ftruncate(fd, 0)
                os.close(fd)
            held.clear()
            time.sleep(POLL_SEC)
        chosen = [g for g in gpus if g.minor in held]
        yield Held(gpus=chosen, control=control, owner=label, waited_sec=round(time.monotonic() - t0, 3),
                   _nvml=_nvml_start([g.minor for g in chosen]))
    finally:
        for fd in held.values():
            os.ftruncate(fd, 0)
            os.close(fd)


@contextmanager
def lending(held: Held | None) -> Iterator[None]:
    """While in this block, this thread's sandboxes that need GPUs use ``held`` (a session's lease) instead of
    reserving their own: for work the holder is blocked on, such as the scoring service replaying a waiting
    session's candidate, which would otherwise wait for the GPUs its own session holds (as
    :func:`.cpus.borrowing` does for cores). ``None`` lends nothing."""
    _local.held = held
    try:
        yield
    finally:
        _local.held = None


@contextmanager
def for_sandbox(spec, backend: str) -> Iterator[Held]:
    """The GPUs a sandbox of ``spec`` gets: the caller's (``spec.held``, a session's lease) if it holds some,
    those lent to this thread if it needs GPUs (:func:`lending`), else ``spec.limits.gpus`` reserved for this
    run and released after it."""
    lent = getattr(_local, "held", None)
    if spec.held is not None or (spec.limits.gpus and lent is not None and len(lent.gpus) >= spec.limits.gpus):
        yield spec.held if spec.held is not None else lent
        return
    with reserve(spec.limits.gpus, spec.holder or f"a {backend}") as held:
        yield held


class Lease:
    """A session's GPUs, acquired and released on request (EurekAgent's GPU helper API, seed 003 §3.2): the
    session's sandboxes see them only between :meth:`acquire` and :meth:`release`, each physical GPU is held
    by one lease (or replay) at a time through the same locks as :func:`reserve`, and every acquisition is
    recorded: who held which GPUs, when, for how long, how long it waited and what NVML measured.

    Args:
        n: the task's GPUs (``[environment] gpus``); a lease of 0 refuses to acquire.
        owner: who holds them, written into the locks (a session of a trial).
    """

    def __init__(self, n: int, owner: str):
        self.n, self.owner = n, owner
        self.held: Held | None = None
        self.records: list[dict] = []
        self._stack: ExitStack | None = None
        self._since = 0.0

    def acquire(self, wait_sec: float | None = None) -> Held:
        """Hold the task's GPUs (already held: the same ones). Raises :class:`GpusBusy` after ``wait_sec``."""
        if self.n <= 0:
            raise WorkbenchError("this task has no GPUs ([environment] gpus = 0)")
        if self.held is not None:
            return self.held
        stack = ExitStack()
        self.held = stack.enter_context(reserve(self.n, self.owner, wait_sec))
        self._stack, self._since = stack, time.monotonic()
        self.records.append({"owner": self.held.owner, "gpus": [g.target for g in self.held.gpus],
                             "acquired_at": datetime.now(UTC).isoformat(timespec="seconds"),
                             "waited_sec": self.held.waited_sec, "released_at": None, "held_sec": None})
        return self.held

    def release(self) -> bool:
        """Give the GPUs back (False when none were held)."""
        if self.held is None or self._stack is None:
            return False
        self.records[-1].update(released_at=datetime.now(UTC).isoformat(timespec="seconds"),
                                held_sec=round(time.monotonic() - self._since, 3), measured=self.held.record())
        self._stack.close()
        self.held, self._stack = None, None
        return True


def _nvml_start(minors: list[int]) -> object | None:
    """NVML handles of the reserved GPUs and the time the run started (None without pynvml or a driver)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handles = {}
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            if pynvml.nvmlDeviceGetMinorNumber(h) in minors:
                handles[pynvml.nvmlDeviceGetMinorNumber(h)] = h
        return {"handles": handles, "since_us": int(time.time() * 1e6)}
    except Exception:  # noqa: BLE001 - no NVML is the common case: recorded as not measured
        return None


def _nvml_end(state) -> dict[int, dict]:
    """Each GPU's name, UUID, the peak memory of processes on it and its busy time since the start."""
    try:
        import pynvml

        out = {}
        for minor, h in state["handles"].items():
            samples = []
            try:
                _, samples = pynvml.nvmlDeviceGetSamples(h, pynvml.NVML_GPU_UTILIZATION_SAMPLES, state["since_us"])
            except pynvml.NVMLError:
                pass
            busy = sum(s.sampleValue.uiVal for s in samples) / max(len(samples), 1)
            used = pynvml.nvmlDeviceGetMemoryInfo(h).used
            out[minor] = {"name": pynvml.nvmlDeviceGetName(h), "uuid": pynvml.nvmlDeviceGetUUID(h),
                          "memory_used_mb_at_end": round(used / 2**20, 1),
                          "mean_utilization_pct": round(busy, 1), "samples": len(samples)}
        return out
    except Exception:  # noqa: BLE001
        return {}
