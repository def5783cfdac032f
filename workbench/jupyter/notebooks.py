"""The papermill engine: run a stage notebook, keep it as provenance, read back its glued summary.

Start-up: anything importing nbformat imports jsonschema, which imports ``rfc3987_syntax`` when it is
installed (JupyterLab pulls it in) and compiles ~35 grammars: ~0.9 s per process measured here. The
workbench blocks that module in its own process before importing papermill; nbformat does not
need it. Kernels run ``python -m workbench.jupyter.kernel`` from this interpreter, found through a private
kernelspec, so a user's own ``python3`` kernelspec is never used by mistake and the kernel dies with
the process that started it. By default a notebook runs on a warm kernel forked from a template that
did the stage imports once (:mod:`workbench.jupyter.pool`); ``WORKBENCH_WARM_KERNELS=0`` launches one cold.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import WorkbenchError

REPO_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks" / "stages"
STAGE_NOTEBOOKS = {
    "session": "01_agent_session.ipynb",
    "replay": "02_clean_replay.ipynb",
    "score": "03_scoring.ipynb",
    "review": "04_review.ipynb",
}
STAGES = tuple(STAGE_NOTEBOOKS)  # the four stages, in their order: trial.json's and the index's too
KERNEL_NAME = "python3"


class StageNotebookError(WorkbenchError):
    """A stage notebook raised; the executed notebook (with the traceback) is kept."""


def notebooks_dir() -> Path:
    d = Path(os.environ.get("WORKBENCH_NOTEBOOKS", REPO_NOTEBOOKS))
    if not d.is_dir():
        raise WorkbenchError(f"stage notebooks not found in {d} (set WORKBENCH_NOTEBOOKS)")
    return d


def _import_papermill():
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]
    import papermill

    return papermill


@cache
def _kernel_path() -> str:
    """A private JUPYTER_PATH holding a python3 kernelspec that launches workbench.jupyter.kernel here."""
    root = Path(tempfile.mkdtemp(prefix="workbench-jupyter-"))
    atexit.register(shutil.rmtree, root, True)
    spec = root / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "workbench.jupyter.kernel", "-f", "{connection_file}"],
        "display_name": "Python 3 (workbench)",
        "language": "python",
        "env": {"WORKBENCH_KERNEL_PARENT": str(os.getpid()), "PYTHONWARNINGS": "ignore"},
    }))
    return str(root)


@contextlib.contextmanager
def _private_kernels():
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = _kernel_path() + (os.pathsep + old if old else "")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = old


class NotebookFailed(WorkbenchError):
    """A notebook executed by papermill raised; the executed copy (with the traceback) is kept."""


class _Lines:
    """A file-like object papermill writes the kernel's stderr into, handed on line by line."""

    def __init__(self, say: Callable[[str], None]):
        self.say, self.buffer = say, ""

    def write(self, text: str) -> None:
        self.buffer += text
        *lines, self.buffer = self.buffer.split("\n")
        for line in lines:
            if line.strip():
                self.say(line.rstrip())

    def flush(self) -> None:
        pass


def execute_notebook(template: Path, out: Path, parameters: dict[str, Any], *, progress_bar: bool = False,
                     stderr: Callable[[str], None] | None = None, warm: bool = False) -> Path:
    """Execute ``template`` with ``parameters`` into ``out`` through the private kernel; ``stderr`` hears
    each line the kernel writes there, as it does (the notebook keeps them too). ``warm``: on a kernel
    from this process's pool (unless ``WORKBENCH_WARM_KERNELS=0``), worth it in a process that runs
    many notebooks; a one-off notebook (a report, the tour) is cheaper on a cold kernel than on a
    template started for it."""
    pm = _import_papermill()
    from . import pool as kernel_pool

    out.parent.mkdir(parents=True, exist_ok=True)
    engine = {"engine_name": kernel_pool.ENGINE_NAME} if warm and kernel_pool.spares() else {}
    with _private_kernels():
        try:
            pm.execute_notebook(str(template), str(out), parameters=parameters, kernel_name=KERNEL_NAME,
                                progress_bar=progress_bar, log_output=False, request_save_on_cell_execute=False,
                                stderr_file=_Lines(stderr) if stderr else None, **engine)
        except pm.PapermillExecutionError as exc:
            raise NotebookFailed(f"{exc.ename}: {exc.evalue} (see {out})") from None
    return out


def read_scraps(path: Path) -> dict[str, Any]:
    """{name: data} of the scraps glued in an executed notebook."""
    import scrapbook

    return {name: scrap.data for name, scrap in scrapbook.read_notebook(str(path)).scraps.items()}


def run_stage_notebook(stage: str, parameters: dict[str, Any], out_dir: Path, name: str | None = None,
                       stderr: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Execute the stage's notebook into ``out_dir`` and return what it glued under the stage name."""
    out = out_dir / (name or STAGE_NOTEBOOKS[stage])
    try:
        execute_notebook(notebooks_dir() / STAGE_NOTEBOOKS[stage], out, parameters, stderr=stderr, warm=True)
    except NotebookFailed as exc:
        raise StageNotebookError(f"{stage} notebook failed: {exc}") from None
    scraps = read_scraps(out)
    if stage not in scraps:
        raise StageNotebookError(f"{stage} notebook finished without gluing its summary (see {out})")
    return scraps[stage]
