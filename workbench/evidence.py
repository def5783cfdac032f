"""The frozen evidence set: freezing it read-only with a manifest, verifying it, and reading it.

Everything read from evidence is untrusted data written by the submission. Readers never follow a
symlink out of the evidence directory, cap what they read, and raise :class:`MissingEvidence` when
a path is absent, so a scorer can zero exactly the leaves that depend on it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from pathlib import Path
from typing import Any

from .errors import WorkbenchError
from .io import copy_tree, iter_files, sha256_bytes, sha256_file

MANIFEST = "MANIFEST.sha256"
TOP_DIRS = ("submission", "replay")
MAX_READ_BYTES = 64 * 1024 * 1024


class MissingEvidence(Exception):
    """A path a leaf depends on is not in the evidence."""

    def __init__(self, path: str, why: str = "not found in the evidence"):
        self.path = path
        super().__init__(f"{path}: {why}")


def normalize(path: str) -> str:
    """Evidence-relative path; paths not under submission/ or replay/ are read under submission/."""
    p = path.strip().lstrip("/")
    while p.startswith("./"):
        p = p[2:]
    top = p.split("/", 1)[0]
    return p if top in TOP_DIRS else f"submission/{p}"


def freeze(staging: Path, dest: Path) -> str:
    """Copy a staged evidence tree to ``dest`` read-only with MANIFEST.sha256; returns the manifest digest.

    Built beside ``dest`` and renamed into place, so a crash leaves either no evidence or all of it.
    """
    dest = Path(dest)
    tmp = dest.with_name(dest.name + ".partial")
    if tmp.exists():
        make_writable(tmp)
        shutil.rmtree(tmp)
    copy_tree(staging, tmp)
    lines = []
    for p in iter_files(tmp):
        if p.is_file() and not p.is_symlink():
            lines.append(f"{sha256_file(p)}  {p.relative_to(tmp).as_posix()}")
    manifest = "\n".join(lines) + ("\n" if lines else "")
    (tmp / MANIFEST).write_text(manifest, encoding="utf-8", errors="surrogateescape")
    make_readonly(tmp)
    if dest.exists():
        make_writable(dest)
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return sha256_bytes(manifest.encode("utf-8", "surrogateescape"))


def _chmod_tree(root: Path, file_mode: int, dir_mode: int) -> None:
    """chmod every file and directory under root, top-down (symlinks untouched). A directory is
    changed before it is entered, so even a tree a submission left at mode 000 can be opened up."""
    os.chmod(root, dir_mode)
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames:
            if not os.path.islink(p := os.path.join(dirpath, n)):
                os.chmod(p, dir_mode)
        for n in filenames:
            if not os.path.islink(p := os.path.join(dirpath, n)):
                os.chmod(p, file_mode)


def make_readonly(root: Path) -> None:
    _chmod_tree(root, 0o444, 0o555)


def make_writable(root: Path) -> None:
    _chmod_tree(root, 0o644, 0o755)


def verify(evidence_dir: Path) -> list[str]:
    """Differences between the evidence and its manifest (empty when intact)."""
    evidence_dir = Path(evidence_dir)
    mf = evidence_dir / MANIFEST
    if not mf.is_file():
        return [f"{mf}: missing"]
    expected: dict[str, str] = {}
    for line in mf.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
        digest, _, rel = line.partition("  ")
        expected[rel] = digest
    problems = []
    seen = set()
    for p in iter_files(evidence_dir):
        rel = p.relative_to(evidence_dir).as_posix()
        if rel == MANIFEST or p.is_symlink() or not p.is_file():
            continue
        seen.add(rel)
        if rel not in expected:
            problems.append(f"{rel}: not in the manifest (added after freezing)")
        elif sha256_file(p) != expected[rel]:
            problems.append(f"{rel}: content changed after freezing")
    for rel in sorted(set(expected) - seen):
        problems.append(f"{rel}: listed in the manifest but missing")
    return problems


class Evidence:
    """Read-only access to one trial's frozen evidence."""

    def __init__(self, root: Path, provenance: dict | None = None):
        self.root = Path(root)
        self._real_root = self.root.resolve()
        self.provenance = provenance or {}

    def resolve(self, path: str) -> Path:
        rel = normalize(path)
        p = (self.root / rel)
        real = p.resolve()
        if real != self._real_root and self._real_root not in real.parents:
            raise MissingEvidence(rel, "points outside the evidence (refused)")
        if not real.exists():
            raise MissingEvidence(rel)
        return real

    def exists(self, path: str) -> bool:
        try:
            self.resolve(path)
            return True
        except MissingEvidence:
            return False

    def glob(self, pattern: str) -> list[str]:
        """Evidence-relative paths of files matching a glob (``**`` crosses directories)."""
        pat = normalize(pattern)
        out = []
        for p in iter_files(self.root):
            rel = p.relative_to(self.root).as_posix()
            if fnmatch.fnmatchcase(rel, pat) and self.exists(rel) and self.resolve(rel).is_file():
                out.append(rel)
        return out

    def has_content(self, path: str) -> bool:
        """A file that exists, or a directory holding at least one file."""
        try:
            p = self.resolve(path)
        except MissingEvidence:
            return False
        if p.is_dir():
            return any(q.is_file() for q in p.rglob("*"))
        return p.is_file()

    def read_bytes(self, path: str, limit: int = MAX_READ_BYTES) -> bytes:
        p = self.resolve(path)
        if not p.is_file():
            raise MissingEvidence(normalize(path), "is not a regular file")
        with open(p, "rb") as fh:
            return fh.read(limit)

    def read_text(self, path: str, limit: int = MAX_READ_BYTES) -> str:
        return self.read_bytes(path, limit).decode("utf-8", errors="replace")

    def read_json(self, path: str) -> Any:
        try:
            return json.loads(self.read_text(path))
        except json.JSONDecodeError as exc:
            raise MissingEvidence(normalize(path), f"is not valid JSON ({exc})") from None

    def read_csv(self, path: str):
        import io

        import pandas as pd

        try:
            return pd.read_csv(io.StringIO(self.read_text(path)))
        except Exception as exc:  # pandas raises many kinds for malformed input
            raise MissingEvidence(normalize(path), f"is not a readable CSV ({type(exc).__name__}: {exc})") from None

    def load_array(self, path: str, key: str | None = None):
        import numpy as np

        rel = normalize(path)
        p = self.resolve(path)
        try:
            if rel.endswith(".npz"):
                with np.load(p, allow_pickle=False) as z:
                    if key is None:
                        raise MissingEvidence(rel, f"is an .npz; name one of its arrays ({', '.join(z.files)})")
                    if key not in z.files:
                        raise MissingEvidence(f"{rel}:{key}", "no such array in the .npz")
                    return z[key]
            if rel.endswith(".npy"):
                return np.load(p, allow_pickle=False)
            df = self.read_csv(path)
            return df[key].to_numpy() if key else df.to_numpy()
        except MissingEvidence:
            raise
        except (ValueError, OSError, KeyError) as exc:
            raise MissingEvidence(rel, f"is not a readable array ({exc})") from None


def ensure_intact(evidence_dir: Path) -> None:
    problems = verify(evidence_dir)
    if problems:
        raise WorkbenchError(
            f"evidence in {evidence_dir} does not match its manifest; refusing to score:\n  " + "\n  ".join(problems)
        )
