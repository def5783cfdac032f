"""Importers: other benchmarks' task formats into workbench task packages.

One registry (``IMPORTERS``, source name → function). An importer writes a task package at ``dest``
and returns an :class:`ImportReport` saying what was carried over and, item by item, what was not
(with why); nothing is dropped silently. The report is also written to ``dest/IMPORT.md`` so whoever
finishes the package knows what is left to do. The formats are summarised in
``../shared/notes/external-formats.md``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from ...errors import WorkbenchError, lookup
from . import harbor, naturebench, paperbench
from .common import ImportReport, prepare_dest

IMPORTERS: dict[str, Callable[[Path, Path], ImportReport]] = {
    "paperbench": paperbench.import_paperbench,
    "paperbenchx": harbor.import_paperbenchx,
    "harbor": harbor.import_harbor,
    "naturebench": naturebench.import_naturebench,
}


def import_task(source: str, src: Path | str, dest: Path | str, *, force: bool = False) -> ImportReport:
    lookup(IMPORTERS, "source", source)
    src, dest = Path(src), Path(dest)
    if not src.exists():
        raise WorkbenchError(f"{src}: not found")
    prepare_dest(dest, force)
    try:
        report = IMPORTERS[source](src, dest)
    except Exception:
        shutil.rmtree(dest, ignore_errors=True)  # never leave a half-imported package behind
        raise
    (dest / "IMPORT.md").write_text(report.markdown(), encoding="utf-8")
    return report


__all__ = ["IMPORTERS", "ImportReport", "import_task"]
