"""A writable mount on a filesystem of its own size, so storage limits hold without a watchdog's help.

A watchdog that walks the tree cannot see a file that was opened, unlinked and then filled (measured:
three such files of 400 MB each passed a 256 MB limit). A filesystem of the limit's size can: writes
past it fail with ENOSPC whatever names the files have, and ``statvfs`` counts unlinked-but-open files.
So a sandbox's writable directory lives on one of these, best first:

* ``ext4-loop``: a sparse image file of ``size_mb`` on the host disk, formatted with as many inodes as
  the file limit allows and loop-mounted (root only); mounted ``nosuid,nodev``;
* ``directory``: a plain directory (unprivileged hosts), bounded only by the watchdog's polls.

The mount's own root is never what the sandbox sees: the writable tree is a subdirectory of it, so the
sandbox's ``/proc/self/mountinfo`` shows a path inside the volume, not the host's staging layout.
"""

from __future__ import annotations

import logging
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .base import SandboxSetupError

log = logging.getLogger(__name__)
MB = 1024 * 1024


def _can_loop_mount() -> bool:
    return (os.geteuid() == 0 and os.environ.get("WORKBENCH_VOLUMES", "1") != "0"
            and Path("/dev/loop-control").exists() and all(
                subprocess.run(["sh", "-c", f"command -v {t}"], capture_output=True).returncode == 0
                for t in ("mkfs.ext4", "mount", "umount")))


@dataclass
class Volume:
    root: Path  # the mount point (or plain directory)
    kind: str  # ext4-loop | directory
    size_mb: int
    max_files: int
    image: Path | None = None

    @classmethod
    def create(cls, root: Path, size_mb: int, max_files: int) -> Volume:
        """A volume mounted at ``root`` (created); falls back to a plain directory where mounting is not
        possible. A failure to make a volume that should work is the workbench's: SandboxSetupError."""
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        if not _can_loop_mount():
            return cls(root, "directory", size_mb, max_files)
        image = root.with_name(root.name + ".img")
        try:
            with open(image, "wb") as fh:
                fh.truncate(size_mb * MB)
            inodes = max(64, max_files + 16)  # the root, lost+found and the tree's own top directory
            _run(["mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-m", "0", "-N", str(inodes),
                  "-E", "lazy_itable_init=1,root_owner=0:0", str(image)])
            _run(["mount", "-o", "loop,nosuid,nodev", str(image), str(root)])
        except (OSError, SandboxSetupError) as exc:
            image.unlink(missing_ok=True)
            raise SandboxSetupError(f"sandbox: could not make a {size_mb} MB volume at {root}: {exc}") from None
        return cls(root, "ext4-loop", size_mb, max_files, image)

    def usage(self) -> tuple[int, int] | None:
        """(bytes, inodes) in use on the volume, unlinked-but-open files included; None for a directory."""
        if self.kind == "directory":
            return None
        st = os.statvfs(self.root)
        return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree

    def full(self) -> str | None:
        """Why the volume counts as full (its size or its inodes exhausted), or None."""
        used = self.usage()
        if used is None:
            return None
        st = os.statvfs(self.root)
        if st.f_bavail * st.f_frsize < MB:
            return (f"storage limit: the command filled its {self.size_mb} MB volume ({used[0] / MB:.0f} MB "
                    "in use, unlinked files included; killed)")
        if st.f_favail == 0:
            return f"file-count limit: the command created more than {self.max_files} files and directories (killed)"
        return None

    def describe(self) -> dict:
        return {"kind": self.kind, "size_mb": self.size_mb, "max_files": self.max_files}

    def release(self) -> None:
        """Unmount and delete the image (its contents go with it); idempotent."""
        if self.kind != "ext4-loop" or self.image is None:
            return
        if os.path.ismount(self.root):
            proc = subprocess.run(["umount", str(self.root)], capture_output=True, text=True)
            if proc.returncode != 0:  # something still holds it open: detach lazily
                subprocess.run(["umount", "-l", str(self.root)], capture_output=True)
        self.image.unlink(missing_ok=True)
        self.image = None


class HostBind:
    """A read-only bind mount of ``source`` at ``target`` on the host (root only), so a sandbox user who
    cannot reach ``source`` itself (say, under a mode-700 directory) can be given it read-only, without a
    copy. Where the workbench is not root, the sandbox runs as the workbench's user and reaches ``source``
    as it is: the bind is skipped and :attr:`path` is ``source``."""

    def __init__(self, source: Path, target: Path):
        self.source, self.target = Path(source), Path(target)
        self.mounted = False

    @property
    def path(self) -> Path:
        return self.target if self.mounted else self.source

    def __enter__(self) -> HostBind:
        if os.geteuid() == 0:
            if self.source.is_dir():
                self.target.mkdir(parents=True, exist_ok=True)
            else:
                self.target.parent.mkdir(parents=True, exist_ok=True)
                self.target.touch()
            _run(["mount", "--bind", str(self.source), str(self.target)])
            self.mounted = True
            try:
                _run(["mount", "-o", "remount,bind,ro,nosuid,nodev", str(self.target)])
            except SandboxSetupError:
                self.__exit__()
                raise
        return self

    def __exit__(self, *exc) -> None:
        if self.mounted:
            proc = subprocess.run(["umount", str(self.target)], capture_output=True)
            if proc.returncode != 0:
                subprocess.run(["umount", "-l", str(self.target)], capture_output=True)
            self.mounted = False


def _run(argv: list[str]) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxSetupError(f"{' '.join(argv[:2])}: {(proc.stderr or proc.stdout).strip()[-300:]}")
