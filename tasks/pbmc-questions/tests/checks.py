"""Task checks for pbmc-questions (PRIVATE).

``compact_sources`` is one of the root gates of questions.json (G5): the package carries code, not stored
results. The answers themselves are a few hundred bytes and cannot be kept out this way; what can is the
full Wilcoxon table (results/markers.csv) that the scorer recomputes (gate G4, tests/recompute.py): its
7650 scores and log fold changes at the precision checked are ~37 KB of incompressible numbers (measured:
LZMA of the values quantized to the tolerances), so a package that replays a stored table fails here.
"""

from __future__ import annotations

import os
import zlib

from workbench.evidence import read_links, read_manifest
from workbench.scoring import CheckOutcome, task_check


@task_check
def compact_sources(ev, max_kb: float = 16.0, outputs: tuple[str, ...] = ("results",)) -> CheckOutcome:
    """Everything the package delivered (names and contents of the sources that took part in the replay,
    directory names, modes, modification times, extended attributes, link targets; output roots excluded)
    compresses to at most ``max_kb`` KB."""
    def delivered(rel: str) -> bool:
        return rel.startswith("submission/") and rel.split("/")[1] not in outputs

    files = sorted(k for k in read_manifest(ev.root) if delivered(k))
    blob = b"".join(k.encode() + b"\0" + ev.read_bytes(k) + b"\0" for k in files)
    entries = sorted(os.path.relpath(os.path.join(d, n), ev.root)
                     for d, dirs, names in os.walk(ev.root / "submission") for n in [*dirs, *names])
    for e in (e for e in entries if delivered(e)):
        st = os.lstat(ev.root / e)
        blob += f"{e}@{st.st_mtime_ns}:{st.st_mode:o}".encode("utf-8", "surrogateescape") + b"\0"
        try:
            for name in os.listxattr(ev.root / e, follow_symlinks=False):
                blob += name.encode() + b"=" + os.getxattr(ev.root / e, name, follow_symlinks=False) + b"\0"
        except OSError:
            pass
    blob += "\0".join(f"{k}->{v}" for k, v in sorted(read_links(ev.root).items()) if delivered(k)).encode(
        "utf-8", "surrogateescape")
    packed = len(zlib.compress(blob, 9)) / 1024
    ok = packed <= max_kb
    return CheckOutcome(float(ok), f"{'pass' if ok else 'fail'}: {len(files)} delivered file(s), "
                        f"{len(blob) / 1024:.1f} KB, {packed:.1f} KB compressed (limit {max_kb:g} KB: "
                        f"{'code' if ok else 'more than code: stored results'})", files[:20])
