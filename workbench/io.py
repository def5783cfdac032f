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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
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


# --- untrusted trees ----------------------------------------------------------------------------
# A submission controls every name, link, mode and level of nesting in the trees the workbench copies,
# hashes, freezes and deletes. These helpers never follow a link, never recurse (a submission can nest
# directories thousands deep: Python recursion and PATH_MAX both break), and list what they refuse
# instead of raising, so a hostile tree is the submission's failure, never the workbench's.

MAX_DEPTH = 128  # directories below this depth are not entered
MAX_PATH_BYTES = 3072  # paths longer than this are not entered (PATH_MAX is 4096 on Linux)


@dataclass(frozen=True)
class Entry:
    rel: str  # posix path relative to the walked root
    path: str  # the root joined with rel
    st: os.stat_result  # lstat: the entry itself, never a link's target

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.st.st_mode)

    @property
    def is_file(self) -> bool:
        return stat.S_ISREG(self.st.st_mode)

    @property
    def is_link(self) -> bool:
        return stat.S_ISLNK(self.st.st_mode)


class Walk:
    """Every entry under ``root``, parents before children, names sorted, without recursion or following
    links. ``skip_top`` names are left out at the top level; ``on_dir(path)`` runs before a directory is
    listed (e.g. to make a mode-000 directory readable). Afterwards ``refused`` lists what was not
    entered (too deep, path too long, unreadable) as ``"rel: why"``, and ``skipped`` the relative paths of
    the entries left out for their depth or length (what a sealed copy must not hold)."""

    def __init__(self, root: Path | str, *, skip_top: Iterable[str] = (), max_depth: int = MAX_DEPTH,
                 on_dir: Callable[[str], None] | None = None):
        self.root = os.fspath(root)
        self.skip_top = set(skip_top)
        self.max_depth = max_depth
        self.on_dir = on_dir
        self.refused: list[str] = []
        self.skipped: list[str] = []

    def __iter__(self) -> Iterator[Entry]:
        stack: list[tuple[str, str, int]] = [("", self.root, 0)]
        while stack:
            rel, path, depth = stack.pop()
            try:
                if self.on_dir:
                    self.on_dir(path)
                with os.scandir(path) as it:
                    names = sorted(e.name for e in it)
            except OSError as exc:
                self.refused.append(f"{rel or '.'}: not readable ({exc.strerror})")
                continue
            below = []
            for name in names:
                if depth == 0 and name in self.skip_top:
                    continue
                r, p = (f"{rel}/{name}" if rel else name), os.path.join(path, name)
                if len(os.fsencode(p)) > MAX_PATH_BYTES:
                    self.refused.append(f"{r[:200]}...: path longer than {MAX_PATH_BYTES} bytes")
                    self.skipped.append(r)
                    continue
                try:
                    st = os.lstat(p)
                except OSError as exc:
                    self.refused.append(f"{r}: {exc.strerror}")
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if depth + 1 >= self.max_depth:  # neither listed nor entered, so a copy never holds it
                        self.refused.append(f"{r}: nested deeper than {self.max_depth} directories")
                        self.skipped.append(r)
                        continue
                    below.append((r, p, depth + 1))
                yield Entry(r, p, st)
            stack.extend(reversed(below))


@dataclass
class Copied:
    """What :func:`copy_tree` left out, relative to its source."""

    hard_links: list[str] = field(default_factory=list)  # regular files also linked from outside the tree
    refused: list[str] = field(default_factory=list)  # special files, too deep, unreadable ("rel: why")
    links: dict[str, str] = field(default_factory=dict)  # with keep_links=False: symlinks left out, and targets


def copy_tree(src: Path, dst: Path, *, skip_top: Iterable[str] = (), dirs_exist_ok: bool = False,
              keep_links: bool = True, skip: Iterable[str] = (), metadata: bool = True,
              hashes: dict[str, str] | None = None) -> Copied:
    """Copy an untrusted tree: directories and regular files, symlinks as links (never followed; with
    ``keep_links=False`` not made at all, only listed with their targets), special files refused, and a file
    hard-linked to something outside the tree skipped (copying it as root would copy, say, a private host
    file the link points at). Directory modes are applied last, so a read-only directory in the source
    cannot stop the copy. With ``metadata=False`` only contents and permission bits are copied (no
    timestamps, no extended attributes), so a package cannot carry data past a content rule in them. With
    ``hashes``, each file's sha256 is taken from the bytes as they are copied (``hashes[rel]``), files are
    copied by parallel threads, and nothing needs reading again to hash them (gigabytes of outputs)."""
    src, dst = Path(src), Path(dst)
    left_out = set(skip)
    walk = Walk(src, skip_top=skip_top)
    entries = [e for e in walk if e.rel not in left_out]
    inside: dict[tuple[int, int], int] = {}
    for e in entries:
        if e.is_file and e.st.st_nlink > 1:
            key = (e.st.st_dev, e.st.st_ino)
            inside[key] = inside.get(key, 0) + 1
    out = Copied(refused=list(walk.refused))
    dst.mkdir(parents=True, exist_ok=dirs_exist_ok)
    dirs = [(str(src), str(dst))]
    hashing: list[tuple[str, str, str]] = []  # (rel, source, target) copied while hashed, after the walk
    for e in entries:
        target = os.path.join(dst, e.rel)
        if e.is_dir:
            os.makedirs(target, exist_ok=dirs_exist_ok)
            dirs.append((e.path, target))
        elif e.is_link:
            if not keep_links:
                out.links[e.rel] = os.readlink(e.path)
                continue
            if dirs_exist_ok and os.path.lexists(target):
                os.unlink(target)
            os.symlink(os.readlink(e.path), target)
        elif e.is_file:
            if e.st.st_nlink > inside.get((e.st.st_dev, e.st.st_ino), 1):
                out.hard_links.append(e.rel)
                continue
            if hashes is not None:
                hashing.append((e.rel, e.path, target))
            elif metadata:
                shutil.copy2(e.path, target, follow_symlinks=False)
            else:
                shutil.copyfile(e.path, target, follow_symlinks=False)
                os.chmod(target, stat.S_IMODE(e.st.st_mode) & 0o777)
        else:
            out.refused.append(f"{e.rel}: not a regular file, directory or link (mode {stat.filemode(e.st.st_mode)})")
    if hashing:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(4, (os.cpu_count() or 1) + 1)) as pool:
            digests = pool.map(lambda job: _copy_hashing(job[1], job[2], metadata), hashing)
            hashes.update(zip((rel for rel, _, _ in hashing), digests, strict=True))
    for s, d in reversed(dirs):
        if metadata:
            shutil.copystat(s, d, follow_symlinks=False)
        else:
            os.chmod(d, stat.S_IMODE(os.lstat(s).st_mode) & 0o777)
    return out


def _copy_hashing(src: str, dst: str, metadata: bool) -> str:
    """Copy one regular file (never through a link) and return the sha256 of the bytes copied; its mode (and
    with ``metadata`` its timestamps and extended attributes) as :func:`shutil.copy2` would."""
    h = hashlib.sha256()
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            while chunk := os.read(fin, CHUNK):
                h.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fout, view):]
        finally:
            os.close(fout)
        mode = stat.S_IMODE(os.fstat(fin).st_mode)
    finally:
        os.close(fin)
    if metadata:
        shutil.copystat(src, dst, follow_symlinks=False)
    else:
        os.chmod(dst, mode & 0o777)
    return h.hexdigest()


def chmod_tree(root: Path, file_mode: int, dir_mode: int) -> None:
    """chmod every directory and regular file under root (links and special files untouched); a
    directory is changed before it is listed, so even a tree left at mode 000 can be opened up."""
    def open_up(path: str) -> None:
        os.chmod(path, dir_mode)

    for e in Walk(root, on_dir=open_up, max_depth=1 << 30):
        if e.is_file:
            os.chmod(e.path, file_mode)


def remove_tree(path: Path | str) -> None:
    """Delete a tree of any depth (without recursion, through directory descriptors, so neither Python's
    recursion limit nor PATH_MAX stops it) and never through a link. Missing paths are fine."""
    path = os.fspath(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW

    def open_dir(name: str, dir_fd: int | None) -> tuple[int, list[str]]:
        try:
            fd = os.open(name, flags, dir_fd=dir_fd)
        except PermissionError:  # a mode-000 directory (only root opens it as it is)
            os.chmod(name, 0o700, dir_fd=dir_fd)
            fd = os.open(name, flags, dir_fd=dir_fd)
        os.fchmod(fd, 0o700)  # entries of a read-only directory cannot be unlinked otherwise
        subdirs = []
        with os.scandir(fd) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    subdirs.append(e.name)
                else:
                    os.unlink(e.name, dir_fd=fd)
        return fd, subdirs

    stack = [open_dir(path, None)]
    names: list[str] = []
    try:
        while stack:
            fd, subdirs = stack[-1]
            if subdirs:
                name = subdirs.pop()
                stack.append(open_dir(name, fd))
                names.append(name)
                continue
            os.close(fd)
            stack.pop()
            if stack:
                os.rmdir(names.pop(), dir_fd=stack[-1][0])
    finally:
        for fd, _ in stack:
            os.close(fd)
    os.rmdir(path)


OWNED = ".workbench-owned"  # a folder the workbench created and may start over


def claim_folder(path: Path | str, *, owned_if: Iterable[str] = ("run.json",)) -> Path:
    """``path`` as a folder the workbench may fill: new, empty, or one it made (marked with :data:`OWNED`, or
    holding one of ``owned_if``: a run's run.json). A user's folder with anything else in it is refused."""
    from .errors import WorkbenchError

    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise WorkbenchError(f"{path}: not a folder; choose another --out")
    if path.is_dir() and any(path.iterdir()) and not any((path / n).exists() for n in (OWNED, *owned_if)):
        raise WorkbenchError(f"{path}: not empty and not a run folder or one the workbench made; refusing to "
                             "delete or add to its contents (choose another --out, or an empty folder)")
    path.mkdir(parents=True, exist_ok=True)
    return path


def start_fresh(path: Path | str, *, owned_if: Iterable[str] = ("run.json",)) -> Path:
    """Make ``path`` an empty folder for the workbench to fill (:func:`claim_folder`), deleting what the
    workbench made there before; a user's folder is refused, never emptied."""
    path = claim_folder(path, owned_if=owned_if)
    if any(path.iterdir()):
        remove_tree(path)
        path.mkdir(parents=True)
    (path / OWNED).write_text("created by workbench; deleted and recreated when it runs here again\n")
    return path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def iter_files(root: Path, exclude_top: Iterable[str] = ()) -> Iterable[Path]:
    """Every entry under root that is not a directory (files, links, special files), parents' entries
    before their children's, names sorted, never following links; skips top-level names given."""
    for e in Walk(root, skip_top=exclude_top):
        if not e.is_dir:
            yield Path(e.path)


def tree_hashes(root: Path, exclude_top: Iterable[str] = ()) -> dict[str, str]:
    """{relative path: sha256} of every regular file under root; a symlink hashes as its target text."""
    out: dict[str, str] = {}
    for e in Walk(root, skip_top=exclude_top):
        if e.is_link:
            out[e.rel] = "symlink:" + sha256_bytes(os.readlink(e.path).encode("utf-8", "surrogateescape"))
        elif e.is_file:
            out[e.rel] = sha256_file(Path(e.path))
    return dict(sorted(out.items()))


def digest_of(hashes: dict[str, str]) -> str:
    """One digest for a {path: hash} mapping (order-independent)."""
    h = hashlib.sha256()
    for k in sorted(hashes):
        h.update(k.encode("utf-8", "surrogateescape") + b"\0" + hashes[k].encode() + b"\n")
    return h.hexdigest()
