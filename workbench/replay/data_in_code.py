"""Data hidden in code: large high-entropy literals in delivered sources.

Results computed outside the replay can travel inside a ``.py`` as a base64 or hex string, an escaped
``bytes`` literal or a long array of numbers; the replay keeps such a file (it is a source) and the
package-size gate alone is generous enough for a few kilobytes of it. This module finds those literals
so the replay's provenance can list them and a task can gate on them (the ``data_in_code`` check).

What counts (each at least ``MIN_CHARS`` characters, or ``MIN_NUMBERS`` numbers):

- ``base64``: a run of base64 characters (possibly wrapped over lines) whose per-character entropy is at
  least 4.5 bits (English text, identifiers and paths stay below 4.3);
- ``hex``: a run of hex digits of entropy at least 3.5 bits;
- ``escaped-bytes``: ``\\xNN`` escapes back to back;
- ``numbers``: numbers separated only by commas, blanks or brackets.

A physical-constants table or a quadrature rule of a few hundred numbers is data too; tasks choose the
threshold (``max_bytes``) that leaves room for what their science needs. Bounded: at most
``MAX_FILE_BYTES`` of a file and ``MAX_TOTAL_BYTES`` of a package are read, at most ``MAX_FINDINGS``
findings are kept (their sizes are still summed).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..io import Walk

MIN_CHARS = 256
MIN_NUMBERS = 64
MAX_FILE_BYTES = 4 << 20
MAX_TOTAL_BYTES = 64 << 20
MAX_FINDINGS = 200

# a line break between two runs may carry quotes, blanks and a backslash, but only one newline: blanks that
# may hold newlines on both sides of it let a file of long blank runs cost quadratic time
_B64 = re.compile(rb"[A-Za-z0-9+/=_-]{40,}(?:[\"']?[ \t]*\\?\r?\n[ \t]*[\"']?[A-Za-z0-9+/=_-]{40,})*")
_HEX = re.compile(rb"(?:[0-9a-fA-F]{2}){%d,}" % (MIN_CHARS // 2))
_ESC = re.compile(rb"(?:\\x[0-9a-fA-F]{2}){%d,}" % (MIN_CHARS // 4))
_NUM = re.compile(rb"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_SEP = re.compile(rb"^[\s,;\[\]()]*$")


def _entropy(data: bytes) -> float:
    n = len(data)
    return -sum(c / n * math.log2(c / n) for c in Counter(data).values()) if n else 0.0


def _number_runs(text: bytes) -> Iterable[tuple[int, int, int]]:
    """(start, end, count) of every run of at least MIN_NUMBERS numbers separated only by separators."""
    start = end = None
    count = 0
    for m in _NUM.finditer(text):
        if end is not None and m.start() - end <= 64 and _SEP.match(text[end:m.start()]):
            end, count = m.end(), count + 1
            continue
        if count >= MIN_NUMBERS:
            yield start, end, count
        start, end, count = m.start(), m.end(), 1
    if count >= MIN_NUMBERS:
        yield start, end, count


def scan_text(text: bytes) -> list[dict]:
    """The literals of one file: ``{"kind", "offset", "bytes"}``, largest first."""
    found: list[dict] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, a: int, b: int) -> None:
        if any(a < y and x < b for x, y in taken):
            return
        taken.append((a, b))
        found.append({"kind": kind, "offset": a, "bytes": b - a})

    for m in _ESC.finditer(text):
        add("escaped-bytes", m.start(), m.end())
    for m in _HEX.finditer(text):
        if _entropy(m.group()) >= 3.5:
            add("hex", m.start(), m.end())
    for m in _B64.finditer(text):
        body = re.sub(rb"[\"'\s\\]", b"", m.group())
        if len(body) >= MIN_CHARS and _entropy(body) >= 4.5:
            add("base64", m.start(), m.end())
    for a, b, _ in _number_runs(text):
        if b - a >= MIN_CHARS // 2:
            add("numbers", a, b)
    return sorted(found, key=lambda f: -f["bytes"])


def scan_tree(root: Path, *, skip_top: Iterable[str] = (), only: Iterable[str] | None = None) -> dict:
    """Scan the regular files under ``root`` (not following links): ``{"total_bytes", "findings": [{"path",
    "kind", "offset", "bytes"}], "truncated"}``.

    Args:
        root: the package (or the evidence's ``submission/``).
        skip_top: top-level names left out (the output roots).
        only: relative paths to scan (the sources), or everything.
    """
    wanted = set(only) if only is not None else None
    total, read, truncated = 0, 0, False
    findings: list[dict] = []
    for e in Walk(root, skip_top=skip_top):
        if not e.is_file or (wanted is not None and e.rel not in wanted):
            continue
        if read >= MAX_TOTAL_BYTES:
            truncated = True
            break
        try:
            fd = os.open(e.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as f:
            data = f.read(min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - read))
        truncated |= e.st.st_size > len(data)
        read += len(data)
        for f_ in scan_text(data):
            total += f_["bytes"]
            if len(findings) < MAX_FINDINGS:
                findings.append({"path": e.rel, **f_})
    findings.sort(key=lambda f: -f["bytes"])
    return {"total_bytes": total, "findings": findings, "truncated": truncated}
