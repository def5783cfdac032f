"""The docker session: one hardened container serves an agent's many calls, each an ``exec``, and nothing of
a call (processes, /tmp) outlives it. Real engine (marker ``docker``; .ci/docker-base starts one)."""

from __future__ import annotations

import json
import re
import threading
import time

import pytest

from tests.conftest import required_tool_missing
from workbench.sandbox import Limits, Mount, SandboxSpec
from workbench.sandbox.docker.sandbox import DockerSandbox
from workbench.sandbox.docker.session import LABEL

pytestmark = pytest.mark.docker


@pytest.fixture
def box():
    b = DockerSandbox()
    try:
        ok = b.available()[0]
    except Exception:
        ok = False
    if not ok:
        required_tool_missing("a Docker engine (bash .ci/docker-base starts one and builds its base image)")
    return b


def _spec(box, tmp_path, **limits) -> SandboxSpec:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    box.prepare(work)
    lim = Limits(**{"timeout_sec": 1, "memory_mb": 256, "cpus": 1, "max_processes": 64, **limits})
    return SandboxSpec(mounts=[Mount(work, "/home/submission", writable=True)], workdir="/home/submission",
                       limits=lim, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}, network="none")


def _call(session, tmp_path, command: str, timeout: float = 20, stdin: bytes | None = None):
    res = session.run(["bash", "-c", command], timeout, tmp_path / "out", tmp_path / "err", stdin=stdin)
    return res, (tmp_path / "out").read_text(), (tmp_path / "err").read_text()


def _containers(box, session):
    return box.client.containers.list(all=True, filters={"label": f"{LABEL}={session.token}"})


def test_one_container_serves_many_calls(box, tmp_path):
    with box.session(_spec(box, tmp_path)) as s:
        names = set()
        for i in range(5):
            res, out, _ = _call(s, tmp_path, f"cat /etc/hostname; id -u; echo {i} >> calls.txt")
            assert res.exit_code == 0 and res.backend == "docker"
            host, uid = out.split()
            names.add(host)
            assert int(uid) == box.uid
        assert len(names) == 1 and s.containers_started == 1 and len(_containers(box, s)) == 1
        assert names == {s.container.id[:12]}
        res, out, err = _call(s, tmp_path, "echo err >&2; exit 3")
        assert (res.exit_code, out, err) == (3, "", "err\n")
    assert (tmp_path / "work" / "calls.txt").read_text().split() == ["0", "1", "2", "3", "4"]


def test_a_timeout_kills_the_call_and_the_next_call_works(box, tmp_path):
    with box.session(_spec(box, tmp_path)) as s:
        t0 = time.monotonic()
        res, _, _ = _call(s, tmp_path, "echo start; sleep 60", timeout=1)
        assert res.timed_out and res.exit_code is None and res.limit == "time" and res.signal == 9
        assert time.monotonic() - t0 < 10
        res, out, _ = _call(s, tmp_path, "echo ok")
        assert res.exit_code == 0 and out == "ok\n" and s.containers_started == 1


def test_nothing_of_a_call_survives_it(box, tmp_path):
    """A background child holding the call's output open neither delays the call nor outlives it; /tmp is
    emptied, as a fresh bwrap sandbox would have it."""
    with box.session(_spec(box, tmp_path)) as s:
        t0 = time.monotonic()
        res, out, _ = _call(s, tmp_path, "sleep 300 & echo hi > /tmp/x; mkdir /dev/shm/d; echo started")
        assert res.exit_code == 0 and out == "started\n" and time.monotonic() - t0 < 3
        assert res.leftover_processes_killed == 1
        res, out, _ = _call(s, tmp_path, 'for d in /proc/[0-9]*; do [ -O "$d" ] && cat $d/comm; done; '
                                         'ls -A /tmp /dev/shm')
        assert "sleep" not in out and "x" not in out.split() and "d" not in out.split(), out
        assert res.leftover_processes_killed == 0


def test_stdin_reaches_the_call_and_is_gone_after_it(box, tmp_path):
    with box.session(_spec(box, tmp_path)) as s:
        res, out, _ = _call(s, tmp_path, "cat > in.txt; wc -c < in.txt", stdin=b"line one\nline two\n")
        assert res.exit_code == 0 and out.strip() == "18"
        res, out, _ = _call(s, tmp_path, "ls -A /run/workbench-session; cat")  # no stdin: end of file at once
        assert res.exit_code == 0 and out == ""
    assert (tmp_path / "work" / "in.txt").read_bytes() == b"line one\nline two\n"


def test_the_container_is_gone_after_close_also_when_a_call_raised(box, tmp_path):
    with pytest.raises(RuntimeError, match="agent crashed"):
        with box.session(_spec(box, tmp_path)) as s:
            assert _call(s, tmp_path, "true")[0].exit_code == 0
            raise RuntimeError("agent crashed")
    assert _containers(box, s) == [] and s.container is None
    with box.session(_spec(box, tmp_path)) as s2:
        _call(s2, tmp_path, "true")
    assert _containers(box, s2) == []


def test_no_network_inside(box, tmp_path, host_http):
    port, hits = host_http
    with box.session(_spec(box, tmp_path)) as s:
        res, out, _ = _call(s, tmp_path, f"ls /sys/class/net; (echo > /dev/tcp/127.0.0.1/{port}) 2>/dev/null "
                                         "&& echo REACHED")
        assert out.split() == ["lo"] and hits == []


def test_limits_are_reported_and_the_session_goes_on(box, tmp_path):
    with box.session(_spec(box, tmp_path, max_storage_mb=16, max_file_mb=64)) as s:
        res, _, _ = _call(s, tmp_path, "head -c 600m /dev/zero | tail")  # tail holds it all in memory
        assert res.oom_killed and res.limit == "memory" and "memory limit" in res.limit_exceeded
        res, _, _ = _call(s, tmp_path, "head -c 40m /dev/zero > big; sleep 20")
        assert res.limit == "storage" and res.exit_code == 137 and res.wall_sec < 10
        (tmp_path / "work" / "big").unlink()
        res, out, _ = _call(s, tmp_path, "echo alive")
        assert out == "alive\n" and s.containers_started == 1


def test_a_container_that_died_is_said_and_replaced(box, tmp_path):
    with box.session(_spec(box, tmp_path)) as s:
        first = s.container.id
        def kill_once_the_call_runs():  # a timer lost the race on a busy machine: wait for the call itself
            container = box.client.containers.get(first)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not any("sleep 31" in " ".join(p) for p in
                                                          container.top().get("Processes") or []):
                time.sleep(0.05)
            container.kill()

        threading.Thread(target=kill_once_the_call_runs, daemon=True).start()
        res, _, _ = _call(s, tmp_path, "sleep 31")
        assert res.exit_code != 0 and "container stopped during the call" in res.limit_exceeded
        res, out, _ = _call(s, tmp_path, "cat /etc/hostname")
        assert res.exit_code == 0 and out.strip() == s.container.id[:12] != first[:12]
        box.client.containers.get(s.container.id).kill()  # between calls (an external kill, the keeper's end)
        res, out, _ = _call(s, tmp_path, "echo again")
        assert out == "again\n" and s.containers_started == 3
        assert [c.id for c in _containers(box, s)] == [s.container.id]  # the dead ones are removed


def test_an_agent_session_under_docker_runs_its_calls_in_one_container(tmp_path, mini_task, box):
    from workbench.batch.matrix import AgentConfig
    from workbench.session.run import run_session

    calls = [{"id": "c1", "name": "write_file", "arguments": json.dumps({"path": "reproduce.sh", "content":
              'mkdir -p results\necho \'{"value": 42}\' > results/value.json\n'})},
             {"id": "c2", "name": "bash", "arguments": json.dumps({"command": "bash reproduce.sh; cat /etc/hostname"})},
             {"id": "c3", "name": "bash", "arguments": json.dumps({"command": "cat /etc/hostname; cat results/*"})}]
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text(json.dumps({"turn": 1, "role": "assistant", "message": "m", "tool_calls": calls}) + "\n")
    before = {c.id for c in box.client.containers.list(all=True, filters={"label": LABEL})}
    d = run_session(mini_task, AgentConfig(name="rt", agent="replay", options={"trajectory": str(recorded)}),
                    tmp_path / "t", sandbox="docker")
    assert d.status == "delivered" and "replayed 3 tool calls" in d.message, d.message
    obs = [o["content"] for o in json.loads((tmp_path / "t/session/trajectory.jsonl").read_text().splitlines()[0])
           ["observations"]]
    hosts = [re.findall(r"\b[0-9a-f]{12}\b", o) for o in obs[1:]]
    assert hosts[0] and hosts[0] == hosts[1] and '{"value": 42}' in obs[2], obs
    assert {c.id for c in box.client.containers.list(all=True, filters={"label": LABEL})} <= before
    assert (tmp_path / "t/session/submission/results/value.json").is_file()
