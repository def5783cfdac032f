"""The ``endpoint`` network policy under attack: from inside a session's sandbox the configured endpoint
answers at its unchanged URL, and nothing else is reachable: another listening port of the host's
loopback, the host's other addresses, DNS, the host's abstract unix sockets."""

from __future__ import annotations

import http.server
import json
import socket
import threading

import pytest

from workbench.agents.public_task import PublicTask
from workbench.agents.workspace import Workspace
from workbench.errors import WorkbenchError
from workbench.sandbox.base import Limits, SandboxSetupError, SandboxSpec
from workbench.sandbox.endpoint import parse_endpoint

PROBE = r"""
import json, socket, sys, urllib.request
url, other, others = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
out = {"endpoint": urllib.request.urlopen(url, timeout=5).read().decode()}
def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
        return "open"
    except OSError as e:
        return type(e).__name__
out["other_port"] = tcp("127.0.0.1", other)
out["other_addresses"] = {a: tcp(a, int(url.rsplit(":", 1)[1].split("/")[0])) for a in others}
try:
    socket.getaddrinfo("pypi.org", 443)
    out["dns"] = "resolved"
except OSError as e:
    out["dns"] = type(e).__name__
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0workbench-endpoint-test")
    out["abstract"] = "open"
except OSError as e:
    out["abstract"] = type(e).__name__
print(json.dumps(out))
"""


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"model endpoint"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def host_services():
    """The endpoint (an HTTP server on every address of the host), a second listening port on the host's
    loopback (what an attacker wants: a scoring service, a database) and an abstract unix socket."""
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0workbench-endpoint-test")
    abstract.listen()
    yield server.server_address[1], other.getsockname()[1]
    server.shutdown()
    other.close()
    abstract.close()


def host_addresses() -> list[str]:
    """The host's primary non-loopback IPv4 address, if it has a route out (reachable with network = host)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # no packet is sent: this only picks the outgoing address
            return [] if s.getsockname()[0].startswith("127.") else [s.getsockname()[0]]
        except OSError:
            return []


def test_only_the_endpoint_is_reachable_from_a_session(mini_task, tmp_path, host_services):
    port, other = host_services
    url = f"http://127.0.0.1:{port}/v1"
    ws = Workspace(PublicTask.of(mini_task), tmp_path / "sub", env_dir=None, network="endpoint", endpoint=url)
    with ws:
        (ws.work / "probe.py").write_text(PROBE)
        res = ws.run(f"python3 probe.py {url} {other} {' '.join(host_addresses())}", 30)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["endpoint"] == "model endpoint"  # the base URL works unchanged
    assert out["other_port"] == "ConnectionRefusedError"  # the host's other loopback port: not there
    assert all(v != "open" for v in out["other_addresses"].values()), out
    assert out["dns"] == "gaierror" and out["abstract"] != "open", out


def test_the_same_attack_succeeds_with_network_host(mini_task, tmp_path, host_services):
    """The control: with ``host`` the same probe reaches the other port, so the test above can fail."""
    port, other = host_services
    url = f"http://127.0.0.1:{port}/v1"
    with Workspace(PublicTask.of(mini_task), tmp_path / "sub", env_dir=None, network="host") as ws:
        (ws.work / "probe.py").write_text(PROBE)
        res = ws.run(f"python3 probe.py {url} {other}", 30)
    assert json.loads(res.stdout)["other_port"] == "open", res.output


def test_a_large_exchange_is_relayed_intact(mini_task, tmp_path):
    """The forwarders pass bytes both ways, half-closes included (a streamed reply ends cleanly)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def echo():
        conn, _ = listener.accept()
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data[::-1][::-1])

    threading.Thread(target=echo, daemon=True).start()
    port = listener.getsockname()[1]
    client = ("import socket, hashlib, sys\n"
              f"s = socket.create_connection(('127.0.0.1', {port}))\n"
              "blob = bytes(range(256)) * 8192\n"
              "s.sendall(blob); s.shutdown(socket.SHUT_WR)\n"
              "got = b''.join(iter(lambda: s.recv(65536), b''))\n"
              "print(len(got), got == blob)\n")
    with Workspace(PublicTask.of(mini_task), tmp_path / "sub", env_dir=None, network="endpoint",
                   endpoint=f"127.0.0.1:{port}") as ws:
        res = ws.run(f"python3 -c \"{client}\"", 30)
    listener.close()
    assert res.stdout.split() == [str(256 * 8192), "True"], res.output


@pytest.mark.parametrize("bad", ["no-port-here", "http://127.0.0.1:80/v1", "https://api.example.com/v1"])
def test_an_endpoint_that_cannot_be_bridged_is_refused_clearly(bad):
    with pytest.raises(WorkbenchError, match="network policy endpoint"):
        parse_endpoint(bad)


def test_docker_names_the_policy_it_does_not_support():
    from workbench.sandbox.docker.options import container_options

    spec = SandboxSpec(mounts=[], workdir="/", limits=Limits(timeout_sec=1, memory_mb=64, cpus=1),
                       network="endpoint", endpoint="127.0.0.1:8080")
    with pytest.raises(SandboxSetupError, match="network policy 'endpoint' is not supported"):
        container_options(spec, "image")
