"""The frozen evidence set: sealing it read-only with a manifest, verifying it, and reading it.

Everything read from evidence is untrusted data written by the submission, so the freeze makes a
*sealed* copy: regular files and directories only. A symbolic link is recorded in the manifest with its
target as text and never made, so nothing that reads evidence can follow one; special files and trees
nested too deep are refused and listed. Readers cap what they read and raise :class:`MissingEvidence`
when a path is absent, so a scorer can zero exactly the leaves that depend on it.

MANIFEST.sha256 is what ``sha256sum`` writes (names with a backslash or newline escaped, as it escapes
them), plus one line per link, ``symlink "<target as JSON>"  <name>`` (``sha256sum -c`` skips it as
improperly formatted). Its digest is kept in the replay's provenance, outside the evidence.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from .errors import WorkbenchError
from .io import Walk, chmod_tree, copy_tree, remove_tree, sha256_bytes, sha256_file

MANIFEST = "MANIFEST.sha256"
TOP_DIRS = ("submission", "replay", "secret")  # secret/: the replay with secret inputs (workbench.replay.trial)
MAX_READ_BYTES = 64 * 1024 * 1024


class MissingEvidence(Exception):
    """A path a leaf depends on is not in the evidence."""

    def __init__(self, path: str, why: str = "not found in the evidence"):
        self.path = path
        super().__init__(f"{path}: {why}")


def normalize(path: str) -> str:
    """Evidence-relative path; paths not under submission/, replay/ or secret/ are read under submission/."""
    p = path.strip().lstrip("/")
    while p.startswith("./"):
        p = p[2:]
    top = p.split("/", 1)[0]
    return p if top in TOP_DIRS else f"submission/{p}"


def _escape(name: str) -> tuple[str, str]:
    """(prefix, name) as GNU sha256sum writes them: a name holding a backslash, newline or carriage
    return is escaped and its line starts with a backslash, so every name is exactly one line."""
    if not any(c in name for c in "\\\n\r"):
        return "", name
    return "\\", name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def _unescape(name: str) -> str:
    out, i = [], 0
    while i < len(name):
        c = name[i]
        if c == "\\" and i + 1 < len(name):
            out.append({"n": "\n", "r": "\r", "\\": "\\"}.get(name[i + 1], name[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


LINK = "symlink "


def manifest_text(hashes: dict[str, str], links: dict[str, str] | None = None) -> str:
    """MANIFEST.sha256 for {path: sha256} and {path: link target}: sorted, one line per entry."""
    lines = []
    entries = {**{k: ("file", v) for k, v in hashes.items()}, **{k: ("link", v) for k, v in (links or {}).items()}}
    for rel in sorted(entries):
        kind, value = entries[rel]
        prefix, name = _escape(rel)
        if kind == "file":
            lines.append(f"{prefix}{value}  {name}")
        else:
            target = json.dumps(value.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
            lines.append(f"{prefix}{LINK}{target}  {name}")
    return "".join(line + "\n" for line in lines)


def parse_manifest(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """({path: sha256}, {path: link target}) from a manifest's text."""
    files: dict[str, str] = {}
    links: dict[str, str] = {}
    for line in text.split("\n"):
        if not line:
            continue
        escaped = line.startswith("\\")
        body = line[escaped:]
        if body.startswith(LINK):
            target, end = json.JSONDecoder().raw_decode(body, len(LINK))
            rel = body[end + 2:]
            links[_unescape(rel) if escaped else rel] = target
            continue
        digest, _, rel = body.partition("  ")
        files[_unescape(rel) if escaped else rel] = digest
    return files, links


def _manifest_file(evidence_root: Path) -> tuple[dict[str, str], dict[str, str]]:
    mf = Path(evidence_root) / MANIFEST
    if not mf.is_file():
        return {}, {}
    return parse_manifest(mf.read_text(encoding="utf-8", errors="surrogateescape"))


def read_manifest(evidence_root: Path) -> dict[str, str]:
    """Evidence-relative path -> sha256 as frozen (empty when there is no manifest)."""
    return _manifest_file(evidence_root)[0]


def read_links(evidence_root: Path) -> dict[str, str]:
    """Evidence-relative path -> target of every symbolic link the submission had there (never frozen)."""
    return _manifest_file(evidence_root)[1]


def partial(dest: Path) -> Path:
    """Where evidence for ``dest`` is built before it is renamed into place."""
    return Path(dest).with_name(Path(dest).name + ".partial")


def freeze(staging: Path, dest: Path, *, in_place: bool = False,
           known: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """Seal a staged evidence tree as ``dest``, read-only with MANIFEST.sha256; returns the manifest's digest
    (to be kept outside the evidence) and the entries refused (special files, too deep).

    Built beside ``dest`` (:func:`partial`) and renamed into place, so a crash leaves either no evidence or all
    of it. By default the staged tree is copied there first. ``in_place``: ``staging`` *is* that partial
    tree, staged by the workbench itself (with :func:`~workbench.io.copy_tree`, after the sandbox is gone):
    it is sealed where it is, its links listed and removed; ``known`` holds the digests taken while it was
    staged (:func:`~workbench.io.copy_tree`'s ``hashes``), so the outputs of a replay are read once, by the
    copy that staged them, and only the rest is hashed here.
    """
    dest = Path(dest)
    tmp = partial(dest)
    if in_place:
        if Path(staging).resolve() != tmp.resolve():
            raise ValueError(f"freeze in place: {staging} is not {tmp}")
        links, refused = _unlink_non_files(tmp)
    else:
        remove_tree(tmp)
        copied = copy_tree(staging, tmp, keep_links=False)
        links, refused = copied.links, copied.refused
    hashes = hash_files(tmp, known if in_place else None)
    manifest = manifest_text(hashes, links).encode("utf-8", "surrogateescape")
    (tmp / MANIFEST).write_bytes(manifest)
    make_readonly(tmp)
    remove_tree(dest)
    os.replace(tmp, dest)
    return sha256_bytes(manifest), refused


def _unlink_non_files(root: Path) -> tuple[dict[str, str], list[str]]:
    """Make a staged tree hold only what a sealed copy holds: directories and regular files within the
    walk's depth and path length. A link is listed with its target and removed; a tree too deep or a path
    too long (counted from the evidence's root, as every reader walks it) is refused and removed."""
    links: dict[str, str] = {}
    walk = Walk(root)
    refused: list[str] = []
    for e in list(walk):
        if e.is_link:
            links[e.rel] = os.readlink(e.path)
            os.unlink(e.path)
        elif not (e.is_dir or e.is_file):
            refused.append(f"{e.rel}: not a regular file, directory or link")
            os.unlink(e.path)
    for rel in walk.skipped:
        remove_tree(os.path.join(root, rel))
    return links, refused + walk.refused


def hash_files(root: Path, known: dict[str, str] | None = None) -> dict[str, str]:
    """sha256 of every regular file under ``root``, by relative path (those in ``known`` taken from it): read
    in parallel threads (hashing and reading release the GIL), at the disk's speed rather than one core's."""
    from concurrent.futures import ThreadPoolExecutor

    known = known or {}
    files = [(e.rel, e.path) for e in Walk(root) if e.is_file]
    todo = [(rel, path) for rel, path in files if rel not in known]
    with ThreadPoolExecutor(max_workers=min(4, (os.cpu_count() or 1) + 1)) as pool:
        digests = dict(zip((rel for rel, _ in todo), pool.map(lambda f: sha256_file(Path(f[1])), todo), strict=True))
    return {rel: known[rel] if rel in known else digests[rel] for rel, _ in files}


def make_readonly(root: Path) -> None:
    chmod_tree(root, 0o444, 0o555)


def make_writable(root: Path) -> None:
    chmod_tree(root, 0o644, 0o755)


def verify(evidence_dir: Path, manifest_digest: str | None = None) -> list[str]:
    """Differences between the evidence and its manifest (empty when intact). With ``manifest_digest``
    (the digest the replay attested outside the evidence) a manifest rewritten together with the
    evidence is detected too."""
    evidence_dir = Path(evidence_dir)
    mf = evidence_dir / MANIFEST
    if not mf.is_file():
        return [f"{mf}: missing"]
    problems = []
    if manifest_digest is not None and sha256_file(mf) != manifest_digest:
        problems.append(f"{MANIFEST}: differs from the digest the replay recorded in its provenance")
    try:
        expected = read_manifest(evidence_dir)
    except ValueError as exc:
        return problems + [f"{MANIFEST}: unreadable ({exc})"]
    seen = set()
    walk = Walk(evidence_dir)
    for e in walk:
        if e.rel == MANIFEST or e.is_dir:
            continue
        if not e.is_file:
            problems.append(f"{e.rel!r}: not a regular file (sealed evidence holds none; added after freezing)")
            continue
        seen.add(e.rel)
        if e.rel not in expected:
            problems.append(f"{e.rel!r}: not in the manifest (added after freezing)")
        elif sha256_file(Path(e.path)) != expected[e.rel]:
            problems.append(f"{e.rel!r}: content changed after freezing")
    for rel in sorted(set(expected) - seen):
        problems.append(f"{rel!r}: listed in the manifest but missing")
    return problems + [f"{r} (changed after freezing)" for r in walk.refused]


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex in which only ``**`` crosses ``/``. fnmatch's ``*`` and ``?`` match ``/`` too, so
    ``results/*.csv`` would count files a submission tucked into subfolders."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")  # no folder, or any number of them
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] in "*?":
            out.append("[^/]*" if pattern[i] == "*" else "[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 1 + (pattern[i + 1:i + 2] in ("!", "]")))) > 0:
            body = pattern[i + 1:end]
            negate = body.startswith("!")
            body = re.sub(r"([\\^\[])", r"\\\1", body[1:] if negate else body)
            out.append(f"(?!/)[{'^' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


class Evidence:
    """Read-only access to one trial's frozen evidence (what rubric checks receive).

    Args:
        root: the trial's evidence/ directory.
        provenance: the replay's provenance.json (what ran, the manifest's digest).
        receipts: the replay's execution receipts.
    """

    def __init__(self, root: Path, provenance: dict | None = None, receipts: dict | None = None):
        self.root = Path(root)
        self._real_root = self.root.resolve()
        self.provenance = provenance or {}
        self.receipts = receipts  # what ran (workbench.receipts), checked against the provenance's digest
        self._links: dict[str, str] | None = None

    @property
    def links(self) -> dict[str, str]:
        """The submission's symbolic links: recorded in the manifest, not part of the sealed evidence."""
        if self._links is None:
            try:
                self._links = read_links(self.root)
            except ValueError:
                self._links = {}
        return self._links

    def resolve(self, path: str) -> Path:
        rel = normalize(path)
        if rel.rstrip("/") in self.links:
            raise MissingEvidence(rel, f"is a symbolic link to {self.links[rel.rstrip('/')]!r} in the submission "
                                       "(links are recorded, never followed)")
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
        """Evidence-relative paths of files matching a glob: ``*`` and ``?`` stay within a folder, ``**``
        crosses folders (``results/**`` is every file below results/, ``results/**/*.csv`` any depth)."""
        match = glob_regex(normalize(pattern)).fullmatch
        return [e.rel for e in Walk(self.root) if e.is_file and match(e.rel)]

    def has_content(self, path: str) -> bool:
        """A file that exists, or a directory holding at least one file."""
        try:
            p = self.resolve(path)
        except MissingEvidence:
            return False
        if p.is_dir():
            return any(e.is_file for e in Walk(p))
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


def ensure_intact(evidence_dir: Path, manifest_digest: str | None = None) -> None:
    problems = verify(evidence_dir, manifest_digest)
    if problems:
        raise WorkbenchError(
            f"evidence in {evidence_dir} does not match its manifest; refusing to score:\n  " + "\n  ".join(problems)
        )
