"""What only bwrap does (its fallbacks, its setup checks, its cgroups); what every backend guarantees is in
test_contract.py."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from tests.conftest import required_tool_missing, write_task
from workbench.replay.trial import replay_trial
from workbench.sandbox import BwrapSandbox, Limits, Mount, SandboxSetupError, SandboxSpec, cgroups
from workbench.task import load_task


def _task(tmp_path, **kw):
    return load_task(write_task(tmp_path / "task", **kw))


def _replay(task, submission, tmp_path, **kw):
    trial = tmp_path / "trial"
    prov = replay_trial(task, submission, trial, **kw)
    return prov, trial


def _out(trial: Path, name: str) -> str:
    return (trial / "evidence" / "submission" / "results" / name).read_text()


@pytest.mark.slow
def test_without_cgroups_address_space_is_the_fallback_and_says_so(tmp_path, submission, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CGROUPS", "0")
    script = "mkdir -p results\npython3 -c \"bytearray(600 * 1024 * 1024)\" 2> results/err.txt || true\n"
    prov, trial = _replay(_task(tmp_path, memory_mb=300), submission({"reproduce.sh": script}), tmp_path)
    assert "MemoryError" in _out(trial, "err.txt") and prov.limit_mechanisms["memory"].startswith("rlimit-as")
    assert prov.peak_memory_mb is None and not prov.oom_killed


def test_sandbox_runs_a_fresh_unprivileged_uid_and_cleans_up(tmp_path):
    box = BwrapSandbox()
    # like replay's staging: a directory the sandbox uid can reach (pytest's tmp_path is 0700 root)
    work = Path(tempfile.mkdtemp(prefix="wb-test-"))
    os.chmod(work, 0o711)
    (work / "x.sh").write_text("id -u; echo $HOME; env | cut -d= -f1 | sort | paste -sd, ; ls /tmp | wc -l\n")
    box.prepare(work)
    spec = SandboxSpec(mounts=[Mount(work, "/home/submission")], workdir="/home/submission",
                       limits=Limits(timeout_sec=10, memory_mb=512, cpus=1), env={"PATH": "/usr/bin:/bin",
                                                                                   "HOME": "/tmp"})
    res = box.run(["bash", "x.sh"], spec, tmp_path / "out", tmp_path / "err")
    uid, home, names, ntmp = (tmp_path / "out").read_text().split()
    assert res.exit_code == 0 and uid == "1000" and home == "/tmp"
    assert set(names.split(",")) == {"HOME", "PATH", "PWD", "SHLVL", "_"}  # --clearenv: only what we set
    assert ntmp == "0"
    if os.geteuid() == 0:
        assert box.uid >= 2_000_000
        assert json.dumps(box.describe())
    shutil.rmtree(work)


def test_unused_port_is_really_free_outside():
    # guard for the network test: a closed loopback port refuses from the host too
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1)


def test_an_unreachable_mount_source_is_a_setup_error_not_a_failed_replay(tmp_path, submission, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("only root drops to a separate sandbox uid")
    task_root = write_task(tmp_path / "task")
    (task_root / "environment" / "install.sh").write_text("mkdir -p \"$WORKBENCH_ENV/bin\"\n")
    private = tmp_path / "private-envs"  # pytest's tmp_path is 0700: the sandbox uid cannot enter it
    monkeypatch.setenv("WORKBENCH_ENVS", str(private))
    from workbench.sandbox.environments import install_env

    task = load_task(task_root)
    install_env(task)
    with pytest.raises(SandboxSetupError, match="not reachable by the unprivileged sandbox user.*0700"):
        replay_trial(task, submission({"reproduce.sh": "mkdir -p results\n"}), tmp_path / "trial")
    assert not (tmp_path / "trial/replay/provenance.json").exists()
    assert not (tmp_path / "trial/evidence").exists()


def test_a_bwrap_setup_failure_is_detected_even_past_the_precheck(tmp_path):
    box = BwrapSandbox()
    work = Path(tempfile.mkdtemp(prefix="wb-test-"))
    os.chmod(work, 0o711)
    spec = SandboxSpec(mounts=[Mount(work, "/dev/null/cannot-mount-here")], workdir="/",
                       limits=Limits(timeout_sec=10, memory_mb=512, cpus=1), env={"PATH": "/usr/bin:/bin"})
    with pytest.raises(SandboxSetupError, match="could not set up the sandbox"):
        box.run(["true"], spec, tmp_path / "out", tmp_path / "err")
    shutil.rmtree(work)


THREADS = """mkdir -p results
python3 - <<'PY' > results/threads.txt 2>&1
import threading, time
ts = [threading.Thread(target=time.sleep, args=(0.2,)) for _ in range(64)]
[t.start() for t in ts]
[t.join() for t in ts]
print("64 threads ran")
PY
"""


@pytest.mark.slow
def test_a_64_thread_program_runs_under_a_200_mb_memory_cgroup_where_rlimit_as_kills_it(tmp_path, submission,
                                                                                         monkeypatch):
    if cgroups.version() is None:
        required_tool_missing("writable cgroups (root)")
    task = _task(tmp_path / "a", memory_mb=200)
    prov, trial = _replay(task, submission({"reproduce.sh": THREADS}), tmp_path / "a")
    assert _out(trial, "threads.txt").strip() == "64 threads ran" and prov.status == "succeeded"
    assert prov.limit_mechanisms["memory"].startswith("cgroup") and 0 < prov.peak_memory_mb < 200
    monkeypatch.setenv("WORKBENCH_CGROUPS", "0")  # the same program under RLIMIT_AS alone
    prov, trial = _replay(_task(tmp_path / "b", memory_mb=200), submission({"reproduce.sh": THREADS}), tmp_path / "b")
    assert "can't start new thread" in _out(trial, "threads.txt")
