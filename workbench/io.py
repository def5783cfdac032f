"""Atomic writes and content hashes.

Every result file is written to a temporary sibling and renamed into place, so a killed process
never leaves a half-written file that a later stage would read as a result.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

CHUNK = 1 << 20


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def copy_regular(src: str, dst: str) -> None:
    """A copytree copy_function that copies regular files only: a FIFO, socket or device in an
    untrusted tree is skipped instead of blocking or reading a device."""
    if stat.S_ISREG(os.lstat(src).st_mode):
        shutil.copy2(src, dst)


def copy_tree(src: Path, dst: Path, **kw) -> list[str]:
    """copytree for untrusted trees: symlinks stay links, special files are skipped, and so is a file
    hard-linked to something outside the tree (copying it as root would copy, say, a private host file
    the link points at). Returns the skipped hard links (paths relative to ``src``)."""
    src = Path(src)
    inside: dict[tuple[int, int], int] = {}
    for dirpath, _, files in os.walk(src):
        for n in files:
            st = os.lstat(os.path.join(dirpath, n))
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                inside[(st.st_dev, st.st_ino)] = inside.get((st.st_dev, st.st_ino), 0) + 1
    skipped: list[str] = []

    def copy(s: str, d: str) -> None:
        st = os.lstat(s)
        if stat.S_ISREG(st.st_mode) and st.st_nlink > inside.get((st.st_dev, st.st_ino), 1):
            skipped.append(Path(s).relative_to(src).as_posix())
            return
        copy_regular(s, d)

    shutil.copytree(src, dst, symlinks=True, ignore_dangling_symlinks=True, copy_function=copy, **kw)
    return skipped


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def iter_files(root: Path, exclude_top: Iterable[str] = ()) -> Iterable[Path]:
    """Files and symlinks under root, sorted, never following symlinks; skips top-level names given."""
    root = Path(root)
    skip = set(exclude_top)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d not in skip]
            filenames = [f for f in filenames if f not in skip]
        dirnames.sort()
        for name in sorted(filenames):
            yield Path(dirpath) / name
        # symlinked directories appear in dirnames but are not walked; report them as entries
        for d in list(dirnames):
            p = Path(dirpath) / d
            if p.is_symlink():
                dirnames.remove(d)
                yield p


def tree_hashes(root: Path, exclude_top: Iterable[str] = ()) -> dict[str, str]:
    """{relative path: sha256} of every file under root; a symlink hashes as its target text."""
    out: dict[str, str] = {}
    root = Path(root)
    for p in iter_files(root, exclude_top):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            out[rel] = "symlink:" + sha256_bytes(os.readlink(p).encode("utf-8", "surrogateescape"))
        elif p.is_file():
            out[rel] = sha256_file(p)
    return dict(sorted(out.items()))


def digest_of(hashes: dict[str, str]) -> str:
    """One digest for a {path: hash} mapping (order-independent)."""
    h = hashlib.sha256()
    for k in sorted(hashes):
        h.update(k.encode("utf-8", "surrogateescape") + b"\0" + hashes[k].encode() + b"\n")
    return h.hexdigest()
