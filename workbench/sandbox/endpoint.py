"""The ``endpoint`` network policy: a sandbox that reaches one TCP endpoint (its model API) and nothing else.

Threat model: the agent's processes in the sandbox are untrusted (a CLI agent runs whatever the model
writes). They must reach the model server they were configured with, at its unchanged base URL, but no
other port of the host (the scoring service, a database, the docker daemon's API), no other host and no
DNS. So the sandbox keeps its own empty network namespace (bwrap ``--unshare-net``: only ``lo``) and gets
one unix socket, bind-mounted from the host. A forwarder in the workbench (:class:`HostForwarder`, a
thread) accepts on that socket and connects each connection to the one configured ``host:port``; the
sandbox cannot name any other destination, because the destination is the host side's, not the
client's. Inside, a small forwarder started before the command (:data:`INNER`, run by the sandbox's own
python3) listens on ``127.0.0.1:port`` and relays to the socket, and ``/etc/hosts`` maps the endpoint's
name to 127.0.0.1, so ``http://name:port/v1`` works unchanged. Not covered: what the endpoint itself
allows (anything sent to the model server reaches it, as with ``host``), and TLS, which passes through
untouched (the certificate still names the endpoint's host). Ports below 1024 cannot be listened on
inside (no capabilities), so such an endpoint is refused with its reason.
"""

from __future__ import annotations

import ipaddress
import os
import selectors
import socket
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import WorkbenchError

SOCKET_DIR = "/run/workbench-endpoint"  # where the sandbox sees the socket's directory
SOCKET_NAME = "endpoint.sock"
CHUNK = 1 << 16
MAX_CONNECTIONS = 64  # relayed at once: a sandbox opening connections in a loop cannot exhaust the host's threads


def parse_endpoint(url_or_hostport: str) -> tuple[str, int]:
    """(host, port) of a base URL (``http://127.0.0.1:8080/v1``) or a ``host:port``; a clear error otherwise."""
    text = str(url_or_hostport).strip()
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        port = None
    if not parts.hostname or not port:
        raise WorkbenchError(f"network policy endpoint: cannot tell host and port from {text!r}")
    if port < 1024:
        raise WorkbenchError(f"network policy endpoint: port {port} of {text!r} is below 1024, which the sandbox "
                             "cannot listen on without capabilities (serve the model on a port >= 1024)")
    return parts.hostname, port


def hosts_file(host: str) -> str:
    """The sandbox's /etc/hosts: the endpoint's name (if it is one) and localhost point to the sandbox's lo."""
    names = ["localhost"]
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if host != "localhost":
            names.append(host)
    return f"127.0.0.1 {' '.join(names)}\n"


class HostForwarder:
    """``with HostForwarder(host, port, uid) as directory:`` a unix socket in ``directory`` whose every
    connection is relayed to (host, port); ``uid`` (the sandbox user) may connect to it."""

    def __init__(self, host: str, port: int, uid: int | None = None, scratch: str | None = None):
        self.target = (host, port)
        self.uid = uid
        self.dir = Path(tempfile.mkdtemp(prefix="workbench-endpoint-", dir=scratch))
        self.path = self.dir / SOCKET_NAME
        self.listener: socket.socket | None = None
        self.stopping = threading.Event()
        self.connections = 0
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def __enter__(self) -> Path:
        os.chmod(self.dir, 0o755)
        (self.dir / "hosts").write_text(hosts_file(self.target[0]))
        os.chmod(self.dir / "hosts", 0o644)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.path))
        os.chmod(self.path, 0o600)
        if self.uid is not None and os.geteuid() == 0:
            os.chown(self.path, self.uid, self.uid)
        self.listener.listen(64)
        self.listener.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True, name="endpoint-forwarder").start()
        return self.dir

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self.slots.acquire(blocking=False):
                client.close()
                continue
            self.connections += 1
            threading.Thread(target=self._serve, args=(client,), daemon=True, name="endpoint-relay").start()

    def _serve(self, client: socket.socket) -> None:
        try:
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()  # the sandbox sees a closed connection, as for a refused one
                return
            relay(client, upstream, self.stopping)
        finally:
            self.slots.release()

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        if self.listener is not None:
            self.listener.close()
        for p in (self.path, self.dir / "hosts"):
            p.unlink(missing_ok=True)
        self.dir.rmdir()


def relay(a: socket.socket, b: socket.socket, stopping: threading.Event | None = None) -> None:
    """Copy both ways until both sides are done (a half-close is passed on), then close both."""
    sel = selectors.DefaultSelector()
    peers = {a: b, b: a}
    for s in (a, b):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    open_reads = 2
    try:
        while open_reads and not (stopping is not None and stopping.is_set()):
            for key, _ in sel.select(timeout=0.5):
                src = key.fileobj
                try:
                    data = src.recv(CHUNK)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if data:
                    peers[src].setblocking(True)
                    try:
                        peers[src].sendall(data)
                    except OSError:
                        return
                    finally:
                        peers[src].setblocking(False)
                    continue
                sel.unregister(src)
                open_reads -= 1
                try:
                    peers[src].shutdown(socket.SHUT_WR)
                except OSError:
                    pass
    finally:
        sel.close()
        a.close()
        b.close()


# The forwarder inside the sandbox, run as ``python3 -I -c INNER SOCKET PORT``: it binds 127.0.0.1:PORT,
# forks (the parent's exit tells the entry script it listens), and relays each connection to SOCKET.
INNER = r"""
import os, socket, sys, threading
path, port = sys.argv[1], int(sys.argv[2])
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port)); ls.listen(64)
if os.fork():
    os._exit(0)
os.setsid()
fd = os.open(os.devnull, os.O_RDWR)
for i in (0, 1, 2):
    os.dup2(fd, i)
def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def serve(c):
    u = socket.socket(socket.AF_UNIX)
    try:
        u.connect(path)
    except OSError:
        c.close(); return
    t = threading.Thread(target=pump, args=(u, c), daemon=True); t.start()
    pump(c, u); t.join(); c.close(); u.close()
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


def inner_command(port: int) -> str:
    """The shell line the sandbox entry runs before the command (the forwarder daemonizes once listening)."""
    import shlex

    return f"/usr/bin/python3 -I -c {shlex.quote(INNER)} {SOCKET_DIR}/{SOCKET_NAME} {int(port)}"
