"""`workbench review serve`: the reviewer as a Voila app on 127.0.0.1 for experts who do not code.

Voila executes ``notebooks/apps/review.ipynb`` in a fresh kernel per page load (the kernel learns the
run and the store from WORKBENCH_REVIEW_RUN and WORKBENCH_STORE_URL) and shows only its widgets.
A closed tab shuts its kernel down, idle kernels no page is connected to are culled, and at most
:data:`.kernels.MAX_KERNELS` live at once, so forgotten browser tabs do not pile up.

The URL printed is the one Voila bound, and stopping stops Voila and every kernel
(:mod:`workbench.jupyter.server`). What this module adds:

* **the page is offline**: the ``workbench`` Voila template (``jupyter/voila/templates/workbench``) is
  the lab template without its CDN stylesheets and scripts;
* **only whoever holds the token is served**: any process on the machine can reach 127.0.0.1 (a CLI agent
  on host networking too), and the app shows hidden rubric targets and saves reviews that change R. So Voila
  requires a token (jupyter_server's identity provider: pages, the kernel API and the kernels' websockets),
  given to it in its environment (``JUPYTER_TOKEN``, never on its command line, which every user can
  read) and printed in the URL; jupyter_server refuses websockets from other origins.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..errors import WorkbenchError
from ..jupyter.server import START_TIMEOUT, JupyterProcess, run_until_stopped
from ..paths import RunPaths
from .kernels import MAX_KERNELS

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the directory holding the workbench package
APP = PACKAGE_ROOT / "notebooks" / "apps" / "review.ipynb"
TEMPLATES = Path(__file__).resolve().parent / "jupyter"  # a Jupyter data directory: voila/templates/workbench
TEMPLATE = "workbench"
CULL_IDLE_SECONDS = 300  # a kernel no page is connected to (its tab closed without saying so) goes after this


def app_notebook() -> Path:
    nb = Path(os.environ.get("WORKBENCH_APPS", APP.parent)) / APP.name
    if not nb.is_file():
        raise WorkbenchError(f"review app notebook not found: {nb} (set WORKBENCH_APPS)")
    return nb


def voila_command(run_dir: Path | str, port: int, store_url: str | None = None, token: str | None = None,
                  max_kernels: int = MAX_KERNELS) -> tuple[list[str], dict[str, str], str]:
    """The argv and environment that serve the reviewer for ``run_dir`` on 127.0.0.1:``port``, and the URL to
    open (with the token every request needs; ``token`` None generates one); at most ``max_kernels`` kernels
    live at once (:mod:`.kernels`)."""
    run = RunPaths(Path(run_dir).resolve())
    if not run.trials.is_dir():
        raise WorkbenchError(f"{run_dir}: no trials/ directory (not a run directory)")
    def first(path: Path, var: str) -> str:
        return os.pathsep.join(p for p in (str(path), os.environ.get(var)) if p)

    # the kernels import this very workbench (a checkout's, not another one installed in the venv)
    token = token or secrets.token_urlsafe(32)
    env = {**os.environ, "WORKBENCH_REVIEW_RUN": str(run.root), "JUPYTER_PATH": first(TEMPLATES, "JUPYTER_PATH"),
           "PYTHONPATH": first(PACKAGE_ROOT, "PYTHONPATH"), "JUPYTER_TOKEN": token}
    if store_url:
        env["WORKBENCH_STORE_URL"] = store_url
    argv = [sys.executable, "-m", "voila", str(app_notebook()), f"--port={port}", "--no-browser",
            "--Voila.ip=127.0.0.1", f"--template={TEMPLATE}", "--show_tracebacks=True",
            f"--MappingKernelManager.cull_idle_timeout={CULL_IDLE_SECONDS}",
            "--MappingKernelManager.cull_interval=60", "--Voila.auto_token=True",  # the token: JUPYTER_TOKEN
            "--VoilaConfiguration.multi_kernel_manager_class=workbench.review.kernels.BoundedKernelManager",
            f"--BoundedKernelManager.max_kernels={max_kernels}"]
    return argv, env, f"http://127.0.0.1:{port}/?token={token}"


class ReviewServer(JupyterProcess):
    """A running Voila serving the reviewer for ``run_dir``: the URL it bound, and a stop that leaves no process
    behind (:class:`workbench.jupyter.server.JupyterProcess`)."""

    def __init__(self, run_dir: Path | str, port: int, store_url: str | None = None, *, log: TextIO | None = None,
                 timeout: float = START_TIMEOUT, max_kernels: int = MAX_KERNELS):
        argv, env, _ = voila_command(run_dir, port, store_url, max_kernels=max_kernels)
        super().__init__(argv, env, name="Voila", log=log, timeout=timeout)


def serve(run_dir: Path | str, port: int, store_url: str | None = None, *, on_ready: Callable[[str], None],
          log: TextIO | None = None) -> int:
    """Serve the reviewer until Voila exits, Ctrl-C or SIGTERM; Voila and its kernels are stopped either
    way. ``on_ready`` gets the URL Voila bound. Returns 0 when stopped by the user, else Voila's status."""
    return run_until_stopped(lambda: ReviewServer(run_dir, port, store_url, log=log), on_ready)
