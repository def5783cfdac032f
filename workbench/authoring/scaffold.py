"""`workbench task new`: a task package to start from, so an author writes science, not our formats.

A scaffold is a worked example with its science left out at ``TODO(author)`` marks: every file a task
needs (task.toml with comments, the contract, an environment, the reference, a rubric showing each leaf
kind, a ``@task_check``, a recomputation, secret inputs, calibration with real cheats, the construction
records) and a README saying what to fill in, in what order. As written it passes ``task check`` and fails
``task validate``, which says why line by line; filled in, it validates. ``templates/common/`` holds what
the rubric, sota and qa modes share (the example's science, environment and calibration); one folder per
mode beside it holds what that mode adds or replaces (the registry is the folder listing). A discovery task
shares none of it (a construction and a hidden evaluator, not a reproduction): its folder stands alone.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ..errors import WorkbenchError

TEMPLATES = Path(__file__).parent / "templates"
COMMON = "common"
STANDALONE = frozenset({"discovery"})  # modes whose folder is the whole package
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


def modes() -> list[str]:
    """The modes a scaffold exists for."""
    return sorted(p.name for p in TEMPLATES.iterdir() if p.is_dir() and p.name not in (COMMON, "__pycache__"))


def new_task(dest: Path | str, mode: str = "rubric", name: str | None = None) -> list[Path]:
    """Write the ``mode`` scaffold at ``dest`` (a new or empty directory); returns the files written.

    Args:
        dest: where the package goes; refused if it holds anything (nothing is overwritten).
        mode: the scoring mode (``workbench task new --mode``); one of :func:`modes`.
        name: the task's ``[task] name`` (default ``local/<dest's name>``).
    """
    dest = Path(dest)
    if mode not in modes():
        raise WorkbenchError(f"no scaffold for mode {mode!r} yet; there is: {', '.join(modes())}")
    name = name or f"local/{dest.resolve().name}"
    if not _NAME.match(name):
        raise WorkbenchError(f"task name {name!r}: use letters, digits, '.', '_', '-' and at most one '/'")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise WorkbenchError(f"{dest}: exists and is not an empty directory; nothing was written")
    files: dict[Path, Path] = {}  # the mode's own file replaces the common one of the same path
    for src in (TEMPLATES / mode,) if mode in STANDALONE else (TEMPLATES / COMMON, TEMPLATES / mode):
        files.update({f.relative_to(src): f for f in src.rglob("*")
                      if f.is_file() and "__pycache__" not in f.parts})
    written = []
    for rel, f in sorted(files.items()):
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, out)
        if f.suffix in (".toml", ".md", ".py", ".sh", ".json") or f.name == "Dockerfile":
            out.write_text(f.read_text(encoding="utf-8").replace("__NAME__", name), encoding="utf-8")
        written.append(out)
    return written
