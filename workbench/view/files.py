"""Which files of a trial the view may serve: only regular files inside the trial, reached without links.

A submission controls names and links in its package (``session/submission/`` is the agent's, links
and all), so a request is checked part by part: no ``..``, ``.``, empty or slash-bearing parts, no
component that is a symbolic link, and the resolved path inside the trial directory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}


class Refused(Exception):
    """A request for something outside the trial, or reached through a link."""


def contained(root: Path, parts: list[str]) -> Path:
    """The regular file ``root/parts...``, or :class:`Refused` / FileNotFoundError."""
    if not parts or any(p in ("", ".", "..") or "/" in p or "\0" in p or "\\" in p for p in parts):
        raise Refused("a path part is empty, '.', '..' or holds a separator")
    root = root.resolve()
    path = root
    for part in parts:
        path = path / part
        st = os.lstat(path)  # FileNotFoundError when absent
        if stat.S_ISLNK(st.st_mode):
            raise Refused(f"{'/'.join(parts)} goes through a symbolic link")
    real = path.resolve()
    if root not in real.parents:
        raise Refused(f"{'/'.join(parts)} is outside the trial")
    if not stat.S_ISREG(os.lstat(real).st_mode):
        raise FileNotFoundError(str(real))
    return real


def content_type(path: Path) -> str:
    """Images as images (an ``<img>`` runs no script); everything else as plain text, never HTML or SVG."""
    return IMAGE_TYPES.get(path.suffix.lower(), "text/plain; charset=utf-8")
