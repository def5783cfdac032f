"""`workbench review serve` as a user runs it: the URL it prints is the one that answers, and Ctrl-C leaves
no Voila or kernel process behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import psutil
import pytest

from tests.conftest import REPO, free_port

pytestmark = pytest.mark.slow


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def test_serve_on_a_busy_port_prints_the_bound_url_and_ctrl_c_stops_voila_and_its_kernels(review_run):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    asked = busy.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "review", "serve", str(review_run), "--port",
                             str(asked)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"})
    try:
        line = proc.stdout.readline()  # printed once Voila is up
        url = re.search(r"at (http://127\.0\.0\.1:(\d+)/\?token=[\w-]+) \(Ctrl-C stops it\)", line)
        assert url, line
        assert int(url.group(2)) != asked  # the asked port was taken: the printed one is where Voila is
        page = urllib.request.urlopen(url.group(1), timeout=180).read().decode()  # runs the app in a kernel
        assert "Leaf review" in page
        assert not re.findall(r"<(?:link|script)[^>]+(?:href|src)=[\"']?(?:https?:)?//", page)  # nothing from a CDN

        started = psutil.Process(proc.pid).children(recursive=True)
        assert any("voila" in " ".join(p.cmdline()) for p in started)
        assert any("ipykernel" in " ".join(p.cmdline()) for p in started)  # the page's kernel
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        assert "reviewer stopped" in proc.stdout.read()
        deadline = time.monotonic() + 10
        while _alive(started) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive(started) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        busy.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])  # killed, or its terminal closed
def test_sigterm_or_a_closed_terminal_stops_it_too(review_run, sig):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "review", "serve", str(review_run), "--port",
                             str(port)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert f"http://127.0.0.1:{port}/" in proc.stdout.readline()  # a free port is used as asked
        started = psutil.Process(proc.pid).children(recursive=True)
        assert started
        proc.send_signal(sig)
        assert proc.wait(60) == 0
        time.sleep(1)
        assert _alive(started) == []
    finally:
        if proc.poll() is None:
            proc.kill()
