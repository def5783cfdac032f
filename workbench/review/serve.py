"""`workbench review serve`: the reviewer as a Voila app on 127.0.0.1 for experts who do not code.

Voila executes ``notebooks/apps/review.ipynb`` in a fresh kernel per page load (the kernel learns the
run and the store from WORKBENCH_REVIEW_RUN and WORKBENCH_STORE_URL) and shows only its widgets.
Idle kernels are culled so forgotten browser tabs do not pile up.

Three things a user relies on are this module's job:

* **the URL printed is the one Voila bound**: Voila moves to another port when the asked one is taken,
  so the URL is read from its log ("Voilà is running at:") and printed only once the port answers;
* **stopping stops everything**: Voila runs in its own process group, and every kernel starts in a
  session of its own (jupyter_client does that), so Ctrl-C or SIGTERM sends Voila SIGTERM (it shuts its
  kernels down), then kills what is left of the group and of its descendants;
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
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..errors import WorkbenchError
from ..paths import RunPaths

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the directory holding the workbench package
APP = PACKAGE_ROOT / "notebooks" / "apps" / "review.ipynb"
TEMPLATES = Path(__file__).resolve().parent / "jupyter"  # a Jupyter data directory: voila/templates/workbench
TEMPLATE = "workbench"
CULL_IDLE_SECONDS = 1800
START_TIMEOUT = 120.0
STOP_GRACE = 15.0
_RUNNING_AT = "running at"
_URL = re.compile(r"https?://[^\s/]+:(\d+)/\S*")


def app_notebook() -> Path:
    nb = Path(os.environ.get("WORKBENCH_APPS", APP.parent)) / APP.name
    if not nb.is_file():
        raise WorkbenchError(f"review app notebook not found: {nb} (set WORKBENCH_APPS)")
    return nb


def voila_command(run_dir: Path | str, port: int, store_url: str | None = None, token: str | None = None
                  ) -> tuple[list[str], dict[str, str], str]:
    """The argv and environment that serve the reviewer for ``run_dir`` on 127.0.0.1:``port``, and the URL to
    open (with the token every request needs; ``token`` None generates one)."""
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
            "--MappingKernelManager.cull_interval=60", "--Voila.auto_token=True"]  # the token: JUPYTER_TOKEN
    return argv, env, f"http://127.0.0.1:{port}/?token={token}"


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


class ReviewServer:
    """A running Voila serving the reviewer: the URL it bound, and a stop that leaves no process behind."""

    def __init__(self, run_dir: Path | str, port: int, store_url: str | None = None, *, log: TextIO | None = None,
                 timeout: float = START_TIMEOUT):
        argv, env, _ = voila_command(run_dir, port, store_url)
        self.token = env["JUPYTER_TOKEN"]
        self.url: str | None = None
        self._log = log
        self._tail: deque[str] = deque(maxlen=30)
        self._ready = threading.Event()
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace",
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            self._wait_until_up(timeout)
        except BaseException:
            self.stop()
            raise

    def _read(self) -> None:
        """Voila's log: forwarded (so its errors stay visible), drained (so Voila never blocks on a full
        pipe), and searched for the URL it bound."""
        announced = False
        for line in self.proc.stdout:
            self._tail.append(line)
            if self._log is not None:
                self._log.write(line)
                self._log.flush()
            if _RUNNING_AT in line:
                announced = True
            match = _URL.search(line)
            if announced and match and self.url is None:  # the port it bound (its log masks the token)
                self.url = f"http://127.0.0.1:{match.group(1)}/?token={self.token}"
                self._ready.set()
        self._ready.set()  # Voila exited

    def _wait_until_up(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.2):
            if time.monotonic() > deadline:
                raise WorkbenchError(f"Voila did not start within {timeout:.0f} s")
        if self.url is None:
            self._reader.join(5)
            raise WorkbenchError("Voila did not start: " + "".join(self._tail).strip()[-2000:])
        port = int(_URL.search(self.url).group(1))
        while not _answers(port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise WorkbenchError(f"Voila announced {self.url} but does not answer there")
            time.sleep(0.2)

    def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop Voila and every process it started (kernels, and what they run); idempotent."""
        import psutil

        try:
            descendants = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            descendants = []
        if self.proc.poll() is None:
            _signal_group(self.proc.pid, signal.SIGTERM)  # Voila shuts its kernels down on SIGTERM
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(self.proc.pid, signal.SIGKILL)  # whatever else is left in Voila's group
        self.proc.wait()
        alive = [p for p in descendants if p.is_running()]  # kernels live in sessions of their own
        for p in alive:
            try:
                p.terminate()
            except psutil.NoSuchProcess:
                pass
        _, alive = psutil.wait_procs(alive, timeout=5)
        for p in alive:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        if self.proc.stdout:
            self._reader.join(5)
            self.proc.stdout.close()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def serve(run_dir: Path | str, port: int, store_url: str | None = None, *, on_ready: Callable[[str], None],
          log: TextIO | None = None) -> int:
    """Serve the reviewer until Voila exits, Ctrl-C or SIGTERM; Voila and its kernels are stopped either
    way. ``on_ready`` gets the URL Voila bound. Returns 0 when stopped by the user, else Voila's status."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    stops = (signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal closed (Voila, in its own session, would not see it)
    previous = {sig: signal.signal(sig, interrupt) for sig in stops}
    server = None
    try:
        server = ReviewServer(run_dir, port, store_url, log=log)
        on_ready(server.url)
        return server.proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        for sig in stops:
            signal.signal(sig, signal.SIG_IGN)  # a second signal must not cut the cleanup short
        if server is not None:
            server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
