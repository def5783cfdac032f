"""`workbench review serve`: the reviewer as a Voila app on 127.0.0.1 for experts who do not code.

Voila executes ``notebooks/apps/review.ipynb`` in a fresh kernel per page load (the kernel learns the
run and the store from WORKBENCH_REVIEW_RUN and WORKBENCH_STORE_URL) and shows only its widgets.
Idle kernels are culled so forgotten browser tabs do not pile up.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import WorkbenchError
from ..paths import RunPaths

APP = Path(__file__).resolve().parents[2] / "notebooks" / "apps" / "review.ipynb"
CULL_IDLE_SECONDS = 1800
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the directory holding this workbench package


def app_notebook() -> Path:
    nb = Path(os.environ.get("WORKBENCH_APPS", APP.parent)) / APP.name
    if not nb.is_file():
        raise WorkbenchError(f"review app notebook not found: {nb} (set WORKBENCH_APPS)")
    return nb


def voila_command(run_dir: Path | str, port: int, store_url: str | None = None) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that serve the reviewer for ``run_dir`` on 127.0.0.1:``port``."""
    run = RunPaths(Path(run_dir).resolve())
    if not run.trials.is_dir():
        raise WorkbenchError(f"{run_dir}: no trials/ directory (not a run directory)")
    env = {**os.environ, "WORKBENCH_REVIEW_RUN": str(run.root)}
    # the app's kernel imports the workbench that serves it (a checkout's, not another installed copy)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")) if p)
    if store_url:
        env["WORKBENCH_STORE_URL"] = store_url
    argv = [sys.executable, "-m", "voila", str(app_notebook()), f"--port={port}", "--no-browser",
            "--Voila.ip=127.0.0.1", "--show_tracebacks=True",
            f"--MappingKernelManager.cull_idle_timeout={CULL_IDLE_SECONDS}",
            "--MappingKernelManager.cull_interval=60"]
    return argv, env
