"""What a running sandbox may consume beyond CPU and memory: disk, inodes and log volume.

RLIMIT_FSIZE bounds one file; nothing in the kernel bounds how many files a process writes into a
host directory. :class:`DiskWatch` polls the sandbox's writable mounts while the command runs and
reports the first limit crossed, so the backend can kill the command and say why. A file counts with
the larger of its apparent size and its allocated blocks (a sparse 5 GB file counts as 5 GB: copying it
into the evidence would materialize it). Polls (every 0.5 s) back off so that walking a tree of many files takes at
most a quarter of one core (measured: benchmarks/disk_watch.py).

:func:`drain` copies a pipe into a log file up to a cap and drops (but counts) the rest, so a command
that floods stdout keeps running with bounded logs instead of filling the disk.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

MB = 1024 * 1024


@dataclass
class DiskWatch:
    roots: list[Path]
    max_mb: int
    max_files: int
    interval: float = 0.5
    volumes: list = field(default_factory=list)  # sandbox.volume.Volume of the roots that have one
    _next: float = field(default=0.0, init=False)

    def usage(self) -> tuple[int, int]:
        """(bytes, entries) under the roots; stops counting early once a limit is crossed."""
        total = entries = 0
        limit_bytes = self.max_mb * MB
        stack = [str(r) for r in self.roots]
        while stack:
            try:
                it = os.scandir(stack.pop())
            except OSError:
                continue
            with it:
                for e in it:
                    entries += 1
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += max(st.st_size if not e.is_symlink() else 0, st.st_blocks * 512)
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    if total > limit_bytes or entries > self.max_files:
                        return total, entries
        return total, entries

    def check(self, now: float | None = None) -> str | None:
        """Why the sandbox must stop (a limit crossed), or None; rate-limited by the last walk's cost.
        A volume (a filesystem of the limit's size) is asked first: cheaply, exactly, every poll, unlinked
        files included; the walk still runs, for apparent sizes (a sparse file would be materialised when
        the evidence is copied) and early reporting."""
        for v in self.volumes:
            if why := v.full():
                return why
        now = time.monotonic() if now is None else now
        if now < self._next:
            return None
        t0 = time.monotonic()
        size, files = self.usage()
        cost = time.monotonic() - t0
        self._next = time.monotonic() + max(self.interval, 4 * cost)
        if size > self.max_mb * MB:
            return (f"storage limit: the command wrote more than {self.max_mb} MB into its writable directories "
                    f"(killed at {size / MB:.0f} MB)")
        if files > self.max_files:
            return f"file-count limit: the command created more than {self.max_files} files and directories (killed)"
        return None


def write_capped(chunks, path: Path, cap_bytes: int) -> int:
    """Write byte chunks to ``path`` up to ``cap_bytes``; returns how many bytes were dropped after the cap."""
    written = dropped = 0
    with open(path, "wb", buffering=0) as out:  # unbuffered: a FIFO's reader (a person's terminal) sees it live
        for chunk in chunks:
            room = cap_bytes - written
            if room > 0:
                out.write(chunk[:room])
                written += min(room, len(chunk))
            dropped += max(0, len(chunk) - max(room, 0))
        if dropped:
            out.write(f"\n[workbench: {dropped} further bytes dropped: the log is capped at "
                      f"{cap_bytes // MB} MB]\n".encode())
    return dropped


def drain(pipe, path: Path, cap_bytes: int) -> int:
    """Copy a pipe to ``path`` up to ``cap_bytes`` (reading on, so the writer never blocks), each chunk as soon
    as it is there (``read1``: an interactive shell's prompt is not held back until 64 KiB have come)."""
    read = getattr(pipe, "read1", pipe.read)
    try:
        return write_capped(iter(lambda: read(1 << 16), b""), path, cap_bytes)
    finally:
        pipe.close()
