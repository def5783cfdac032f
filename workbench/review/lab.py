"""`workbench lab [RUN]`: JupyterLab on a run, for experts and analysts who work in notebooks.

JupyterLab serves the run directory on 127.0.0.1 with a token (in its environment, never on its command line)
and ``--allow-root`` where the user is root (JupyterLab refuses root otherwise). The run directory gets its
own copies of the reviewer (``review.ipynb``) and the analysis notebook (``analysis.ipynb``), parameterized
for the run by papermill's own parameter injection, so everything is one click away in the file browser
beside each trial's stage notebooks (``trials/T/notebooks/``): work, outputs and autosaves land in the run,
never in the notebooks this repository ships. A copy already there is kept (its edits are the user's).
The kernels import this very workbench (a checkout's, not another one installed in the environment).
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..analysis.report import OVERVIEW
from ..errors import WorkbenchError
from ..jupyter.server import START_TIMEOUT, JupyterProcess, run_until_stopped
from ..paths import RunPaths
from .serve import PACKAGE_ROOT, app_notebook

REVIEW, ANALYSIS = "review.ipynb", "analysis.ipynb"


def prepare_run(run_dir: Path) -> list[Path]:
    """The run's copies of the reviewer and the analysis notebook (made where missing); returns both."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    made = []
    for name, src, params in ((REVIEW, app_notebook(), {"run_dir": "."}),
                              (ANALYSIS, OVERVIEW, {"runs_dir": ".", "title": f"Results: {run_dir.name}"})):
        dst = run_dir / name
        if not dst.exists():
            nb = parameterize_notebook(load_notebook_node(str(src)), params)
            nb.metadata.pop("papermill", None)
            for cell in nb.cells:  # papermill's bookkeeping, not the user's
                cell.metadata.pop("papermill", None)
                if cell.metadata.get("tags") == []:
                    del cell.metadata["tags"]
            nbformat.write(nb, dst)
        made.append(dst)
    return made


def lab_command(run_dir: Path | str | None, port: int, token: str | None = None
                ) -> tuple[list[str], dict[str, str], str]:
    """The argv and environment that start JupyterLab on ``run_dir`` (None: the current directory) on
    127.0.0.1:``port``, and the page its URL opens (the run's reviewer, or the file browser)."""
    if run_dir is None:
        root, page = Path.cwd(), "/lab"
    else:
        run = RunPaths(Path(run_dir).resolve())
        if not run.trials.is_dir():
            raise WorkbenchError(f"{run_dir}: no trials/ directory (not a run directory)")
        prepare_run(run.root)
        root, page = run.root, f"/lab/tree/{REVIEW}"
    env = {**os.environ, "JUPYTER_TOKEN": token or secrets.token_urlsafe(32),
           "PYTHONPATH": os.pathsep.join(p for p in (str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")) if p)}
    if run_dir is not None:
        env["WORKBENCH_REVIEW_RUN"] = str(root)
    argv = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        argv.append("--allow-root")  # JupyterLab refuses to run as root without it
    return argv, env, page


class LabServer(JupyterProcess):
    """A running JupyterLab on a run: the URL it bound (the run's reviewer), and a stop that leaves no kernel."""

    def __init__(self, run_dir: Path | str | None, port: int, *, log: TextIO | None = None,
                 timeout: float = START_TIMEOUT):
        argv, env, page = lab_command(run_dir, port)
        super().__init__(argv, env, path=page, name="JupyterLab", log=log, timeout=timeout)


def serve_lab(run_dir: Path | str | None, port: int, *, on_ready: Callable[[str], None],
              log: TextIO | None = None) -> int:
    """Serve JupyterLab on ``run_dir`` until it exits, Ctrl-C or SIGTERM; returns 0 when stopped by the user."""
    return run_until_stopped(lambda: LabServer(run_dir, port, log=log), on_ready)
