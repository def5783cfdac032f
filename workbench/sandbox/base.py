"""What a sandbox is: run one command with only the given mounts, no network, and hard limits.

Backends (``bwrap`` here; ``docker`` where an engine exists) implement :class:`Sandbox`. The caller
decides what is visible (mounts) and what the limits are; the backend guarantees the rest: no
network, no capabilities, an unprivileged user, its own pid namespace, and a kill that reaches
every process the command started.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import WorkbenchError

if TYPE_CHECKING:
    from .gpus import Held

# uids handed to sandboxes when the workbench runs as root; far above any login user
UID_BASE = 2_000_000
UID_SPAN = 1_000_000


def pick_uid() -> int:
    """A fresh host uid for one sandbox: its processes are then told apart from everything else on the host
    (the recorder filters by it, the kill after a run reaches only them)."""
    return UID_BASE + secrets.randbelow(UID_SPAN)


class SandboxSetupError(WorkbenchError):
    """The sandbox could not be set up: an infrastructure failure, never the submission's."""


@dataclass(frozen=True)
class Limits:
    timeout_sec: float
    memory_mb: int
    cpus: int
    max_processes: int = 512
    max_open_files: int = 4096
    max_file_mb: int = 2048
    max_storage_mb: int = 4096  # everything written into the writable mounts together
    max_files: int = 100_000  # files and directories in the writable mounts
    max_log_mb: int = 64  # per stdout / stderr log; output beyond it is dropped and counted
    gpus: int = 0  # GPUs reserved for the sandbox (sandbox.gpus); without, it sees none

    @property
    def tmp_mb(self) -> int:
        """Size of the sandbox's /tmp (a RAM-backed tmpfs): the memory budget, or the storage limit if smaller."""
        return min(self.memory_mb, self.max_storage_mb)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Mount:
    source: Path
    target: str
    writable: bool = False
    volume: object | None = None  # a writable mount's sized filesystem (sandbox.volume.Volume), if any


@dataclass
class SandboxSpec:
    mounts: list[Mount]
    workdir: str
    limits: Limits
    env: dict[str, str] = field(default_factory=dict)
    network: str = "none"  # none | host | endpoint (only ``endpoint``, a base URL or host:port: sandbox.endpoint)
    image: str | None = None  # the task's image, for container backends
    endpoint: str | None = None  # with network = endpoint: the one TCP endpoint the sandbox may reach
    # other sandboxes of the same user may be running (a session's snapshot beside its agent): kill only
    # this sandbox's own processes afterwards, never every process of the uid
    shared_uid: bool = False
    record: bool = False  # record what runs (sandbox.recorder): the replay's execution receipts
    # whose cores these are (a session's workspace): a thread working for that owner while it waits
    # (its scoring service) may run on them (sandbox.cpus.borrowing)
    owner: str | None = None
    holder: str | None = None  # who runs in it (a trial's replay), recorded as its GPUs' lock owner
    # GPUs the caller already holds (a session's lease, sandbox.gpus.Lease): the sandbox gets these instead of
    # reserving limits.gpus of its own
    held: Held | None = None


@dataclass
class SandboxResult:
    exit_code: int | None
    wall_sec: float
    timed_out: bool
    signal: int | None
    backend: str
    leftover_processes_killed: int = 0
    queued_sec: float = 0.0  # waiting for free cores; not part of wall_sec or the time limit
    cores: list[int] = field(default_factory=list)
    gpus: list[dict] = field(default_factory=list)  # the GPUs it held: node, lock owner, what NVML measured
    limit_exceeded: str | None = None  # why the backend killed the command (storage, files, memory), if it did
    limit: str | None = None  # which limit stopped it: memory | storage | files | time
    log_bytes_dropped: dict[str, int] = field(default_factory=dict)
    peak_memory_mb: float | None = None  # resident peak, where a cgroup measured it
    oom_killed: bool = False
    mechanisms: dict[str, str] = field(default_factory=dict)  # which mechanism enforced each limit
    record: object | None = None  # with spec.record: the recorder's RawRecord (sandbox.recorder)
    record_unavailable: str | None = None  # with spec.record: why nothing could be recorded


def chown_tree(path: Path, uid: int) -> None:
    """Hand a staging tree to the sandbox's user (links themselves, never their targets)."""
    from ..io import Walk

    os.lchown(path, uid, uid)
    for e in Walk(path):
        os.lchown(e.path, uid, uid)


class Sandbox(Protocol):
    name: str

    def available(self) -> tuple[bool, str]:
        """(usable here, why not)."""

    def describe(self) -> dict:
        """Backend name and version, for provenance."""

    def run(self, argv: list[str], spec: SandboxSpec, stdout: Path, stderr: Path,
            stdin: bytes | int | None = None) -> SandboxResult:
        """Run argv inside a fresh sandbox; stdout/stderr go to the given host files (a FIFO's reader sees each
        chunk as it comes). ``stdin``: bytes to feed, or a file descriptor streamed in as it is (a person's
        terminal). Network is ``none`` (the replay, always) or ``host`` (an agent session that must reach
        its model API)."""

    def session(self, spec: SandboxSpec):
        """A context manager whose ``run(argv, timeout, stdout, stderr, stdin=None)`` runs one call under
        ``spec`` with the call's own timeout; no process, and nothing in /tmp, outlives a call."""


class PerCallSession:
    """A session on a backend whose sandboxes are cheap to start (bwrap, ~30 ms): every call is a fresh
    sandbox of the session's spec."""

    def __init__(self, box, spec: SandboxSpec):
        self.box, self.spec = box, spec

    def run(self, argv: list[str], timeout: float, stdout: Path, stderr: Path, stdin: bytes | int | None = None
            ) -> SandboxResult:
        spec = replace(self.spec, limits=replace(self.spec.limits, timeout_sec=timeout))
        return self.box.run(argv, spec, stdout, stderr, stdin=stdin)

    def close(self) -> None:
        pass

    def __enter__(self) -> PerCallSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


SANDBOX_HOME = "/tmp"  # the sandbox user's home: the call's own /tmp, gone when the call ends


def sandbox_env(env_dir: str | None, cpus: int, keep_path: bool = False) -> dict[str, str]:
    """The replay's environment variables; ``keep_path`` leaves PATH to the image (container backends)."""
    path = "/usr/local/bin:/usr/bin:/bin"
    env = {
        "HOME": SANDBOX_HOME, "TMPDIR": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "MPLCONFIGDIR": "/tmp/.matplotlib", "MPLBACKEND": "Agg", "NUMBA_CACHE_DIR": "/tmp/.numba",
        "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": str(cpus), "OPENBLAS_NUM_THREADS": str(cpus),
        "MKL_NUM_THREADS": str(cpus), "WORKBENCH_REPLAY": "1",
        # Open MPI copies between ranks through shared memory, not by writing into the peer's memory
        # (process_vm_writev), which the execution receipts must count as tampering (sandbox.recorder)
        "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    }
    if env_dir:
        env["VIRTUAL_ENV"] = env["WORKBENCH_ENV"] = env_dir
        path = f"{env_dir}/bin:{path}"
    if not keep_path:
        env["PATH"] = path
    return env
