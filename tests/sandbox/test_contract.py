"""What every sandbox backend guarantees, checked from outside on each (the ``backend`` fixture runs every
test under bwrap and under docker): each test is an attack that must fail, or a limit that must hold.
What only one backend does is tested in test_bwrap.py and test_docker.py."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import PYTHON_DOCKERFILE, REPO, write_task
from workbench.replay.trial import replay_trial
from workbench.task import load_task

pytestmark = pytest.mark.slow


def _task(backend, tmp_path, **kw):
    """The mini task; under docker its image adds python3 to the base (the host's /usr gives bwrap one)."""
    root = write_task(tmp_path / "task", **kw)
    if backend == "docker":
        (root / "environment" / "Dockerfile").write_text(PYTHON_DOCKERFILE)
    return load_task(root)


def _replay(backend, task, submission, tmp_path, **kw):
    trial = tmp_path / "trial"
    prov = replay_trial(task, submission, trial, sandbox=backend, **kw)
    assert prov.sandbox["backend"] == backend
    return prov, trial


def _out(trial: Path, name: str) -> str:
    return (trial / "evidence" / "submission" / "results" / name).read_text()


def test_network_is_cut_even_to_loopback_services_of_the_host(backend, tmp_path, submission, host_http):
    port, hits = host_http
    # the server is reachable from outside the sandbox ...
    import urllib.request
    assert urllib.request.urlopen(f"http://127.0.0.1:{port}/outside", timeout=5).read() == b"served-by-host"
    script = f"""
import socket, urllib.request
out = []
try:
    out.append("tcp:" + urllib.request.urlopen("http://127.0.0.1:{port}/inside", timeout=3).read().decode())
except Exception as e:
    out.append("tcp-blocked:" + type(e).__name__)
try:
    socket.getaddrinfo("pypi.org", 443)
    out.append("dns:resolved")
except Exception as e:
    out.append("dns-blocked:" + type(e).__name__)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    out.append("raw:opened")
except Exception as e:
    out.append("raw-blocked:" + type(e).__name__)
out.append("ifaces:" + ",".join(sorted(n for _, n in socket.if_nameindex())))
open("results/net.txt", "w").write("\\n".join(out))
"""
    sub = submission({"reproduce.sh": "mkdir -p results\npython3 net.py\n", "net.py": script})
    prov, trial = _replay(backend, _task(backend, tmp_path), sub, tmp_path)
    text = _out(trial, "net.txt")
    assert "tcp-blocked" in text and "tcp:" not in text.replace("tcp-blocked", "")
    assert "dns-blocked" in text
    assert "raw-blocked" in text
    assert "ifaces:lo" in text
    assert hits == ["/outside"]  # ... and it never saw a request from inside
    assert prov.network == "none"


def test_private_task_files_and_home_directories_are_invisible(backend, tmp_path, submission):
    task = _task(backend, tmp_path)
    secret = task.root / "tests" / "SECRET.txt"
    repo_rubric = REPO / "tasks" / "h2-pes" / "tests" / "rubric.json"
    script = f"""
for p in "{secret}" "{task.root}/solution/reproduce.sh" "{repo_rubric}" /root /home/submission/../../root \\
         /proc/1/root{secret}; do
  if cat "$p" >/dev/null 2>&1 || ls "$p" >/dev/null 2>&1; then echo "READ $p"; else echo "denied $p"; fi
done
tok=private-token-7; tok="${{tok}}f3a"  # assembled so this script does not match itself
grep -rl --exclude-dir=usr --exclude-dir=proc --exclude-dir=sys "$tok" / 2>/dev/null | head -5 | sed 's/^/FOUND /'
ls /home
mkdir -p results; true
"""
    sub = submission({"reproduce.sh": script + "\n"})
    prov, trial = _replay(backend, task, sub, tmp_path)
    out = (trial / "replay" / "stdout.log").read_text()
    assert "READ" not in out and "FOUND" not in out, out
    assert out.count("denied") == 6
    assert out.strip().endswith("submission")  # /home holds only the submission


def test_capability_based_remount_escape_fails(backend, tmp_path, submission):
    marker = Path("/usr/workbench-escape-test")
    marker.unlink(missing_ok=True)
    script = f"""
mkdir -p results
grep CapEff /proc/self/status > results/caps.txt
id -u > results/uid.txt
mount -o remount,rw /usr 2>> results/attempts.txt || echo "remount denied" >> results/attempts.txt
mount --bind /tmp /usr 2>> results/attempts.txt || echo "bind denied" >> results/attempts.txt
unshare -rm sh -c 'mount -o remount,rw /usr && touch {marker}' 2>> results/attempts.txt \\
  || echo "nested userns remount denied" >> results/attempts.txt
touch {marker} 2>> results/attempts.txt || echo "write denied" >> results/attempts.txt
cat /etc/shadow > /dev/null 2>&1 && echo "shadow READ" >> results/attempts.txt \
  || echo "shadow denied" >> results/attempts.txt
"""
    sub = submission({"reproduce.sh": script})
    prov, trial = _replay(backend, _task(backend, tmp_path), sub, tmp_path)
    assert not marker.exists()
    assert _out(trial, "caps.txt").split() == ["CapEff:", "0000000000000000"]
    assert _out(trial, "uid.txt").strip() == str(prov.sandbox["inner_uid"]) != "0"
    attempts = _out(trial, "attempts.txt")
    for what in ("remount denied", "bind denied", "nested userns remount denied", "write denied", "shadow denied"):
        assert what in attempts, attempts


def test_memory_limit_holds(backend, tmp_path, submission):
    script = """
mkdir -p results
python3 - <<'PY'
try:
    block = bytearray(600 * 1024 * 1024)
    open("results/mem.txt", "w").write("allocated")
except MemoryError:
    open("results/mem.txt", "w").write("MemoryError")
PY
"""
    task = _task(backend, tmp_path, memory_mb=300)
    prov, trial = _replay(backend, task, submission({"reproduce.sh": script}), tmp_path)
    assert prov.limits["memory_mb"] == 300
    if "cgroup" in prov.limit_mechanisms["memory"]:  # resident memory: the kernel's OOM killer, recorded
        assert prov.oom_killed and prov.limit == "memory" and prov.status == "failed"
        assert 250 <= prov.peak_memory_mb <= 300 and "memory limit" in prov.failure_reasons[0]
    else:  # the fallback, RLIMIT_AS: the allocation fails inside
        assert _out(trial, "mem.txt") == "MemoryError"


def _alive(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def test_time_limit_kills_every_descendant(backend, tmp_path, submission):
    marker = f"wbmarker{os.getpid()}"
    script = f"""
mkdir -p results
sleep 301 {marker}a &
setsid sleep 302 {marker}b &
nohup sh -c 'sleep 303 {marker}c' >/dev/null 2>&1 &
(trap '' TERM HUP; exec -a {marker}d sleep 304) &
sleep 1000
"""
    task = _task(backend, tmp_path, timeout_sec=60)
    t0 = time.monotonic()
    prov, trial = _replay(backend, task, submission({"reproduce.sh": script}), tmp_path, timeout=2)
    assert time.monotonic() - t0 < 20
    assert prov.timed_out and prov.status == "failed"
    assert prov.limits["timeout_sec"] == 2  # the --timeout override won over the task's 60 s
    assert "timed out after 2 s" in prov.failure_reasons[0]
    time.sleep(0.5)
    assert _alive(marker) == []


def test_process_limit_holds(backend, tmp_path, submission):
    script = """
mkdir -p results
python3 - <<'PY'
import os, time
n = 0
try:
    for _ in range(500):
        pid = os.fork()
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
except BlockingIOError:
    pass
open("results/forks.txt", "w").write(str(n))
PY
"""
    task = _task(backend, tmp_path, max_processes=40)
    prov, trial = _replay(backend, task, submission({"reproduce.sh": script}), tmp_path)
    assert int(_out(trial, "forks.txt")) < 40


def test_credentials_in_the_workbench_environment_do_not_reach_the_replay(backend, tmp_path, submission, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("JUDGE_API_KEY", "judge-should-not-leak")
    sub = submission({"reproduce.sh": "mkdir -p results; env > results/env.txt\n"})
    _, trial = _replay(backend, _task(backend, tmp_path), sub, tmp_path)
    env = _out(trial, "env.txt")
    assert "should-not-leak" not in env
    assert "WORKBENCH_REPLAY=1" in env


