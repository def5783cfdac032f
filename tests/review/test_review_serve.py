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

from tests.conftest import REPO, as_in_a_terminal, free_port

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
                            env={**os.environ, "PYTHONWARNINGS": "ignore"}, preexec_fn=as_in_a_terminal)
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


@pytest.mark.attack
def test_a_client_without_the_token_cannot_reach_the_app_its_kernel_or_save_a_review(review_run):
    """Any process on the machine can reach 127.0.0.1 (a CLI agent on host networking too): without the token
    it gets no page, no kernel and no websocket to the reviewer's kernel, so it cannot drive the widgets that
    save a review; with the token from another site's page, the websocket is refused too."""
    import asyncio
    import http.client
    from urllib.parse import urlsplit

    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    from workbench.review.serve import ReviewServer
    from workbench.store import Store

    server = ReviewServer(review_run, free_port())
    try:
        base = server.url.split("?")[0]
        port = urlsplit(base).port
        page = urllib.request.urlopen(base, timeout=60).read().decode()  # no token: the login form, not the app
        assert "Leaf review" not in page and "token" in page.lower()
        assert not [p for p in psutil.Process(server.proc.pid).children(recursive=True)
                    if "ipykernel" in " ".join(p.cmdline())]  # and no kernel was started for it
        for path in ("/api/kernels", "/api/kernels/x/channels", "/voila/api/shutdown/x"):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", path)
            answer = conn.getresponse()
            assert answer.status == 403 or (answer.status == 302 and answer.getheader("Location").startswith(
                "/login")), (path, answer.status)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=180)  # the owner: the app, a kernel
        conn.request("GET", urlsplit(server.url).path + "?" + urlsplit(server.url).query)
        answer = conn.getresponse()
        app = answer.read().decode()
        assert "Leaf review" in app
        login = "; ".join(c.split(";")[0] for c in answer.headers.get_all("Set-Cookie") or [])
        kernel = re.search(r"kernelId[\"']?\s*[:=]\s*[\"']([0-9a-f-]{36})", app).group(1)

        async def channels(headers: dict[str, str], query: str = "") -> str:
            url = f"ws://127.0.0.1:{port}/api/kernels/{kernel}/channels{query}"
            try:
                ws = await websocket_connect(HTTPRequest(url, headers=headers, connect_timeout=30))
            except HTTPClientError as exc:
                return f"refused {exc.code}"
            ws.close()
            return "open"

        origin = {"Origin": f"http://127.0.0.1:{port}"}
        assert asyncio.run(channels(origin)) == "refused 403"  # no token: no channel to the widgets' kernel
        assert asyncio.run(channels(origin, "?token=wrong")) == "refused 403"
        # the owner's login cookie, sent by a page of another site the owner's browser has open: refused
        assert login and asyncio.run(channels({"Origin": "http://evil.example", "Cookie": login})) == "refused 403"
        assert asyncio.run(channels({**origin, "Cookie": login})) == "open"  # the owner's own page
        assert asyncio.run(channels(origin, f"?token={server.token}")) == "open"
        assert Store.for_run(review_run).reviews_for("run").empty
    finally:
        server.stop()


@pytest.mark.slow
def test_ten_visits_in_a_row_leave_at_most_the_bound_of_kernels_alive(review_run):
    """Each visit starts a kernel (~165 MB); tabs that never say goodbye do not pile them up: the eleventh
    kernel would first shut down the one needed least."""
    from workbench.review.serve import ReviewServer

    server = ReviewServer(review_run, free_port(), max_kernels=3)
    try:
        def kernels() -> list[psutil.Process]:
            return [p for p in psutil.Process(server.proc.pid).children(recursive=True)
                    if "ipykernel" in " ".join(p.cmdline()) and p.status() != psutil.STATUS_ZOMBIE]

        alive = []
        for _ in range(10):
            app = urllib.request.urlopen(server.url, timeout=180).read().decode()
            assert "Leaf review" in app  # the visit was served, with a kernel of its own
            alive.append(len(kernels()))
        assert alive[:3] == [1, 2, 3] and max(alive) <= 3, alive
    finally:
        server.stop()
