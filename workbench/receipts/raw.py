"""What the execution recorder (:mod:`workbench.sandbox.recorder`) saw, before :mod:`.build` makes receipts of it.

Every process is named by its host pid **and its start time** (the kernel's ``start_time``, monotonic ns):
a pid is reused within a replay (``pid_max`` is 32768 on these hosts), a (pid, start) pair is not. Every file
is named by the device and inode the kernel had for it, never by a path a process handed to a system call,
and only the kernel's own dentry names (the file's name and its parents') stand beside them, for display
and for telling which Python package a file belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Key = tuple[int, int]  # (host pid, start ns): one process, never reused

# kernel super-block magics of filesystems that live in memory: what a sandbox writes there (its /tmp, /dev/shm,
# a memfd) is the submission's, like its volume
MEMORY_FS = frozenset({0x01021994, 0x858458F6, 0x958458F6})  # tmpfs/shmem, ramfs, hugetlbfs
PROC_FS = 0x9FA0


def user_dev(kernel_dev: int) -> int:
    """A kernel ``dev_t`` (major << 20 | minor) as ``os.stat`` gives it."""
    import os

    return os.makedev(kernel_dev >> 20, kernel_dev & 0xFFFFF)


def kernel_dev(st_dev: int) -> int:
    """``os.stat``'s ``st_dev`` as the kernel's ``dev_t``."""
    import os

    return (os.major(st_dev) << 20) | os.minor(st_dev)


FS_IOC_GETVERSION = 0x80087601  # _IOR('v', 1, long): an inode's generation


def generation(path: str, st) -> int | None:
    """The generation of the regular file at ``path`` whose ``lstat`` was ``st`` (None where the filesystem
    has none, or the file is no longer that inode). Opened without following a link, blocking or taking a
    terminal, and only if it is still the file that was listed: nothing is read from it."""
    import fcntl
    import os
    import stat as st_

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        now = os.fstat(fd)
        if not st_.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return None
        return int.from_bytes(fcntl.ioctl(fd, FS_IOC_GETVERSION, bytes(8))[:4], "little")
    except OSError:
        return None
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Exec:
    """A successful execve: the process, its parent, and the file the kernel executed (``mm->exe_file``)."""

    pid: int
    start: int
    ppid: int
    pstart: int
    ns: int
    dev: int
    ino: int
    magic: int
    code_lo: int  # the executable's text, as mapped (for CPU samples)
    code_hi: int
    name: str  # the executed file's own name (its dentry), not the path the caller passed


@dataclass(frozen=True, slots=True)
class Fork:
    """A new process (not a thread): ``child``'s pid, made by the parent at ``ns``."""

    ppid: int
    pstart: int
    child: int
    ns: int


@dataclass(frozen=True, slots=True)
class Open:
    """A successful open: what the new descriptor refers to (``mode``: 1 read, 2 write, 3 both)."""

    pid: int
    start: int
    ns: int
    mode: int
    dev: int
    ino: int
    magic: int
    chain: tuple[str, ...]  # dentry names, outermost first, the file's own name last


@dataclass(frozen=True, slots=True)
class Mapping:
    """Executable memory a process mapped: a file's pages (``dev`` set) or anonymous or re-protected memory
    (``dev`` None: whatever runs there is code the process wrote)."""

    pid: int
    start: int
    ns: int
    addr: int
    length: int
    dev: int | None = None
    ino: int = 0
    magic: int = 0
    chain: tuple[str, ...] = ()
    writable: bool = False  # mapped writable and executable at once: the pages may not be the file's


@dataclass(frozen=True, slots=True)
class Exit:
    """A process's threads' exits, summed: the kernel's CPU accounting (ns), the peak resident pages of the
    process, and when its last thread exited."""

    pid: int
    start: int
    cpu_ns: int
    rss_pages: int
    ns: int


@dataclass(frozen=True, slots=True)
class WriteEvent:
    """A process put bytes into a file of the sandbox's volume (``write`` and its kin, ``sendfile``,
    ``splice``, ``copy_file_range``, or a shared writable mapping), first time per (process, file, program)."""

    pid: int
    start: int
    ns: int
    dev: int
    ino: int
    gen: int | None = None  # the inode's generation: which file on that inode (inodes are reused)


@dataclass
class RawRecord:
    mechanism: dict[str, str]
    writable_devs: frozenset[int] = frozenset()  # kernel dev numbers of the sandbox's writable volumes
    execs: list[Exec] = field(default_factory=list)
    named: dict[Key, list[str]] = field(default_factory=dict)  # the paths execve was called with (display only)
    forks: list[Fork] = field(default_factory=list)
    opens: list[Open] = field(default_factory=list)
    maps: list[Mapping] = field(default_factory=list)
    exits: dict[Key, Exit] = field(default_factory=dict)
    writes: list[WriteEvent] = field(default_factory=list)
    samples: dict[tuple[int, int, int], int] = field(default_factory=dict)  # (pid, start, ip; 0 = kernel) -> n
    sample_hz: int = 0
    taints: list[str] = field(default_factory=list)  # things that make every process's code unverifiable
    problems: list[str] = field(default_factory=list)  # why the record is not complete
    program_hashes: dict[tuple[int, int], str] = field(default_factory=dict)  # (kernel dev, ino) -> sha256
    program_paths: dict[tuple[int, int], str] = field(default_factory=dict)  # (kernel dev, ino) -> verified path

    @property
    def complete(self) -> bool:
        return not self.problems
