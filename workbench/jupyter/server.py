"""A Jupyter server (Voila, JupyterLab) run on 127.0.0.1 for a user: the URL it bound, and a stop that leaves
no process behind.

* **the URL is the one the server bound**: Jupyter servers move to another port when the asked one is
  taken, so the URL is read from its log ("... running at:") and given only once the port answers;
* **stopping stops everything**: the server runs in its own process group, and every kernel starts in a
  session of its own (jupyter_client does that), so a stop sends the server SIGTERM (it shuts its kernels
  down), then kills what is left of the group and of its descendants;
* **the token stays off the command line**: it goes in the environment (``JUPYTER_TOKEN``), which other
  users cannot read, and into the URL.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO

from ..errors import WorkbenchError

START_TIMEOUT = 120.0
STOP_GRACE = 15.0
_RUNNING_AT = "running at"
_URL = re.compile(r"https?://[^\s/]+:(\d+)/\S*")


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class JupyterProcess:
    """A running Jupyter server started from ``argv`` with ``env`` (holding ``JUPYTER_TOKEN``).

    Args:
        argv: the server's command line.
        env: its environment; ``JUPYTER_TOKEN`` is the token every request needs.
        path: the page the printed URL opens (``/`` for Voila, ``/lab/tree/NOTEBOOK`` for JupyterLab).
        name: the server's name in errors.
        log: where its log is copied (None: kept only as the last lines, for errors).
        timeout: seconds to wait for it to answer.
    """

    def __init__(self, argv: list[str], env: dict[str, str], *, path: str = "/", name: str = "the Jupyter server",
                 log: TextIO | None = None, timeout: float = START_TIMEOUT):
        self.token = env["JUPYTER_TOKEN"]
        self.name, self.path = name, path
        self.url: str | None = None
        self.port: int | None = None
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
        """The server's log: forwarded (so its errors stay visible), drained (so it never blocks on a full
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
                self.port = int(match.group(1))
                self.url = f"http://127.0.0.1:{self.port}{self.path}?token={self.token}"
                self._ready.set()
        self._ready.set()  # the server exited

    def _wait_until_up(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.2):
            if time.monotonic() > deadline:
                raise WorkbenchError(f"{self.name} did not start within {timeout:.0f} s")
        if self.url is None:
            self._reader.join(5)
            raise WorkbenchError(f"{self.name} did not start: " + "".join(self._tail).strip()[-2000:])
        while not _answers(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise WorkbenchError(f"{self.name} announced {self.url} but does not answer there")
            time.sleep(0.2)

    def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop the server and every process it started (kernels, and what they run); idempotent."""
        import psutil

        try:
            descendants = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            descendants = []
        if self.proc.poll() is None:
            _signal_group(self.proc.pid, signal.SIGTERM)  # Jupyter servers shut their kernels down on SIGTERM
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(self.proc.pid, signal.SIGKILL)  # whatever else is left in the server's group
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


def run_until_stopped(start: Callable[[], JupyterProcess], on_ready: Callable[[str], None]) -> int:
    """Start a server and serve until it exits, Ctrl-C, SIGTERM or SIGHUP; it and its kernels are stopped
    either way. ``on_ready`` gets the URL it bound. Returns 0 when stopped by the user, else its status."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    stops = (signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal closed (the server, in its own session, would not)
    previous = {sig: signal.signal(sig, interrupt) for sig in stops}
    server = None
    try:
        server = start()
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
