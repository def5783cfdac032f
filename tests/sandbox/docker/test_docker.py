"""The docker sandbox. What it asks the engine for is checked everywhere; behaviour needs an engine
(marker ``docker``: CI starts an engine with .ci/docker-base; skipped where there is none)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.conftest import required_tool_missing, write_files, write_task
from workbench.receipts import Receipts
from workbench.replay.trial import replay_trial
from workbench.sandbox import Limits, Mount, SandboxSpec, get_sandbox
from workbench.sandbox.base import UID_BASE
from workbench.sandbox.docker.image import image_tag
from workbench.sandbox.docker.options import container_options
from workbench.sandbox.docker.sandbox import DockerSandbox
from workbench.sandbox.recorder import available as recorder_available
from workbench.task import load_task


def _spec(tmp_path) -> SandboxSpec:
    limits = Limits(timeout_sec=30, memory_mb=512, cpus=1, max_processes=64, max_open_files=256, max_file_mb=16,
                    max_storage_mb=64)
    return SandboxSpec(mounts=[Mount(tmp_path / "work", "/home/submission", writable=True),
                               Mount(tmp_path / "env", "/opt/env", writable=False)],
                       workdir="/home/submission", limits=limits, env={"HOME": "/tmp"}, network="none")


def test_the_container_gets_the_same_guarantees_as_bwrap(tmp_path):
    o = container_options(_spec(tmp_path), "workbench/mini:abc")
    assert o["network_mode"] == "none" and o["cap_drop"] == ["ALL"] and o["security_opt"] == ["no-new-privileges"]
    assert o["read_only"] is True and o["privileged"] is False and o["user"] == "1000:1000"
    assert o["mem_limit"] == o["memswap_limit"] == "512m" and o["nano_cpus"] == 1_000_000_000
    assert o["pids_limit"] == 64
    assert {u["Name"]: u["Hard"] for u in o["ulimits"]} == {"nofile": 256, "fsize": 16 * 1024 * 1024, "core": 0}
    assert o["tmpfs"]["/tmp"].startswith("size=64m")  # /tmp is bounded (RAM)
    assert o["volumes"][str(tmp_path / "work")] == {"bind": "/home/submission", "mode": "rw"}
    assert o["volumes"][str(tmp_path / "env")] == {"bind": "/opt/env", "mode": "ro"}


def test_the_task_image_tag_follows_the_build_context(tmp_path):
    root = write_task(tmp_path / "t")
    a = image_tag(root)
    assert a.startswith("workbench/env:") and image_tag(shutil.copytree(root, tmp_path / "renamed")) == a
    (root / "environment" / "Dockerfile").write_text("FROM debian:bookworm\nCOPY paper/ /home/paper/\n")
    b = image_tag(root)
    assert b != a
    (root / "environment" / "paper" / "paper.md").write_text("changed paper")  # COPY'd into the image
    assert image_tag(root) != b
    (root / "environment" / ".dockerignore").write_text("# not sent\nstarter_submission\n")
    c = image_tag(root)
    (root / "environment" / "starter_submission" / "reproduce.sh").write_text("echo changed\n")
    assert image_tag(root) == c


def test_without_an_engine_the_backend_says_so_instead_of_falling_back(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    ok, why = DockerSandbox().available()
    assert not ok and "no Docker engine reachable" in why
    task = load_task(write_task(tmp_path / "t"))
    sub = write_files(tmp_path / "sub", {"reproduce.sh": "exit 0\n"})
    with pytest.raises(Exception, match="(?i)docker"):
        replay_trial(task, sub, tmp_path / "trial", sandbox="docker")
    assert not (tmp_path / "trial" / "evidence").exists()  # no evidence from a sandbox that never ran
    assert get_sandbox("docker").name == "docker"


# --- with an engine --------------------------------------------------------------------------------

def _engine() -> bool:
    try:
        return DockerSandbox().available()[0]
    except Exception:
        return False


def _python_task(root, **kw):
    """The mini task with an image that has Python (built by the engine on first use, from the local
    debian:bookworm-slim that .ci/docker-base makes)."""
    write_task(root, **kw)
    (root / "environment" / "Dockerfile").write_text(
        "FROM debian:bookworm-slim\nRUN apt-get update -qq && apt-get install -y -qq --no-install-recommends "
        "python3 >/dev/null && rm -rf /var/lib/apt/lists/*\n")
    return root


@pytest.fixture
def engine():
    if not _engine():
        required_tool_missing("a Docker engine (bash .ci/docker-base starts one and builds its base image)")

@pytest.mark.docker
@pytest.mark.usefixtures("engine")
def test_a_replay_in_docker_is_isolated_and_recorded(tmp_path, host_http):
    port, hits = host_http
    task = load_task(_python_task(tmp_path / "t"))
    secret = task.root / "tests" / "SECRET.txt"
    script = f"""mkdir -p results
echo '{{"value": 42}}' > results/value.json; echo ok > results/log.txt
python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/x', timeout=3)" 2>/dev/null \\
  && echo NET >> results/escape.txt
cat {secret} >> results/escape.txt 2>/dev/null
touch /usr/x 2>/dev/null && echo WROTE >> results/escape.txt
id -u > results/uid.txt
true
"""
    sub = write_files(tmp_path / "sub", {"reproduce.sh": script})
    prov = replay_trial(task, sub, tmp_path / "trial", sandbox="docker")
    ev = tmp_path / "trial" / "evidence" / "submission" / "results"
    assert prov.status == "succeeded" and prov.sandbox["backend"] == "docker"
    assert hits == [] and (ev / "escape.txt").read_text() == ""  # no network, no secret, no write
    uid = int((ev / "uid.txt").read_text())
    assert uid == prov.sandbox["inner_uid"] and (uid >= UID_BASE if os.geteuid() == 0 else uid == 1000)
    assert json.loads((ev / "value.json").read_text()) == {"value": 42}


@pytest.mark.docker
@pytest.mark.usefixtures("engine")
def test_docker_limits_hold(tmp_path):
    task = load_task(_python_task(tmp_path / "t", timeout_sec=5, memory_mb=256))
    sub = write_files(tmp_path / "sub", {"reproduce.sh": "python3 -c 'x = bytearray(2 * 1024**3)'\n"})
    prov = replay_trial(task, sub, tmp_path / "mem", sandbox="docker")
    assert prov.status == "failed" and prov.oom_killed and prov.limit == "memory"
    assert 150 <= prov.peak_memory_mb <= 257  # read from the container's cgroup parent after it was removed
    assert f"(peak {prov.peak_memory_mb} MB)" in prov.limit_exceeded
    sub = write_files(tmp_path / "sub2", {"reproduce.sh": "while :; do :; done\n"})
    prov = replay_trial(task, sub, tmp_path / "loop", sandbox="docker")
    assert prov.timed_out and "timed out" in prov.failure_reasons[0]
    sub = write_files(tmp_path / "sub3", {"reproduce.sh": "echo x >> reproduce.sh\n"})
    prov = replay_trial(task, sub, tmp_path / "src", sandbox="docker")
    assert "modified its own sources" in " ".join(prov.failure_reasons)


@pytest.mark.docker
@pytest.mark.usefixtures("engine")
def test_a_replay_in_docker_has_receipts_like_bwrap(tmp_path):
    """The image's python3 wrote value.json; cp wrote the copy, so the copy is not python's output."""
    if not recorder_available()[0]:
        required_tool_missing(f"the receipts recorder ({recorder_available()[1]})")
    task = load_task(_python_task(tmp_path / "t"))
    script = ("mkdir -p results\n"
              "python3 -c \"import json; json.dump({'value': 42}, open('results/value.json', 'w'))\"\n"
              "cp results/value.json results/copy.json\necho ok > results/log.txt\n")
    sub = write_files(tmp_path / "sub", {"reproduce.sh": script})
    prov = replay_trial(task, sub, tmp_path / "trial", sandbox="docker")
    assert prov.status == "succeeded" and prov.receipts_complete, prov.failure_reasons
    r = Receipts.model_validate_json((tmp_path / "trial" / "replay" / "receipts.json").read_text())
    python = r.runs_of("python3")
    assert python and all(p.sha256 and p.origin == "environment" for p in python)  # the image's own python
    assert [r.writer_name(w) for w in r.writes_of("submission/results/value.json")] == [python[0].program]
    assert [r.writer_name(w) for w in r.writes_of("submission/results/copy.json")] == ["cp"]
    assert python[0].cpu_sec > 0 and r.total_cpu_sec >= python[0].cpu_sec


@pytest.mark.docker
@pytest.mark.usefixtures("engine")
def test_an_image_that_cannot_be_built_is_one_line_naming_the_step(tmp_path):
    from tests.conftest import run_cli

    root = write_task(tmp_path / "t")
    (root / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nRUN echo broken-step && exit 3\n")
    proc = run_cli("replay", str(root), "--submission", str(root / "solution"), "--out", str(tmp_path / "o"),
                   "--sandbox", "docker")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "the image of t could not be built from" in proc.stderr and "non-zero code: 3" in proc.stderr


@pytest.mark.docker
@pytest.mark.usefixtures("engine")
def test_docker_provenance_names_the_backend_image_digest_engine_and_peak(tmp_path):
    import glob

    task = load_task(_python_task(tmp_path / "t"))
    hold = "python3 -c 'x = bytearray(60 * 1024**2); open(\"results/n\", \"w\").write(\"1\")'"
    sub = write_files(tmp_path / "sub", {"reproduce.sh": f"mkdir -p results\n{hold}\n"})
    prov = replay_trial(task, sub, tmp_path / "trial", sandbox="docker")
    assert prov.status == "succeeded", prov.failure_reasons
    client = DockerSandbox().client
    image = client.images.get(prov.environment["image"])
    assert prov.environment["kind"] == "docker" and image.id.startswith("sha256:")
    assert prov.environment["digest"] == image.id  # the image's content, not the tag naming its build context
    assert prov.sandbox["backend"] == "docker" and prov.sandbox["version"] == client.version()["Version"]
    assert 60 <= prov.peak_memory_mb < 256  # the 60 MB python held, measured by the kernel
    assert glob.glob("/sys/fs/cgroup/*/workbench-docker-*") == []  # no cgroup left behind


def _workbench(*args: str, **env: str):
    import subprocess
    import sys

    from tests.conftest import REPO

    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONWARNINGS": "ignore", **env}, timeout=900)


@pytest.mark.docker
@pytest.mark.usefixtures("engine")
def test_env_install_for_docker_builds_once_then_reuses_the_image(tmp_path):
    import uuid

    root = write_task(tmp_path / "t")
    (root / "environment" / "Dockerfile").write_text(f"FROM debian:bookworm-slim\nRUN echo {uuid.uuid4().hex}\n")
    first = _workbench("env", "install", str(root), "--sandbox", "docker")
    assert first.returncode == 0, first.stderr
    assert "building workbench/env:" in first.stderr and first.stdout.startswith("image: workbench/env:")
    again = _workbench("env", "install", str(root), "--sandbox", "docker")
    assert again.returncode == 0 and "building" not in again.stderr and again.stdout == first.stdout


@pytest.mark.docker
@pytest.mark.usefixtures("engine")
def test_a_missing_base_image_is_loaded_from_its_cache_or_built_with_the_extra_certificates(tmp_path):
    """No registry: the base comes from the tarball .ci/docker-base saved (seconds), and a CA bundle makes
    a new base (another cache key) that holds the bundle, for HTTPS in builds behind a proxy."""
    import uuid

    client = DockerSandbox().client
    root = write_task(tmp_path / "t")
    fresh = uuid.uuid4().hex  # an image the engine has never built: it needs the base
    (root / "environment" / "Dockerfile").write_text(f"FROM debian:bookworm-slim\nRUN echo {fresh}\n")
    bundle = tmp_path / "proxy-ca.crt"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIBworkbenchtest\n-----END CERTIFICATE-----\n")
    try:
        client.images.remove("debian:bookworm-slim", force=True)
        loaded = _workbench("env", "install", str(root), "--sandbox", "docker")
        assert loaded.returncode == 0, loaded.stderr
        assert "debian:bookworm-slim loaded from" in loaded.stderr  # the cache, not debootstrap
        client.images.remove("debian:bookworm-slim", force=True)
        (root / "environment" / "Dockerfile").write_text(f"FROM debian:bookworm-slim\nRUN echo {fresh}-ca\n")
        built = _workbench("env", "install", str(root), "--sandbox", "docker", "--ca-bundle", str(bundle),
                           WORKBENCH_IMAGE_CACHE=str(tmp_path / "cache"))
        assert built.returncode == 0, built.stderr
        assert "built from debootstrap" in built.stderr
        inside = client.containers.run("debian:bookworm-slim", ["cat", "/usr/local/share/ca-certificates/"
                                       "workbench-extra.crt"], remove=True)
        assert inside.decode() == bundle.read_text()
    finally:  # the ordinary base again (from the default cache), for every later test
        from workbench.sandbox.docker.image import ensure_base

        client.images.remove("debian:bookworm-slim", force=True)
        ensure_base(client)
        client.images.get("debian:bookworm-slim")


def test_env_install_for_docker_without_an_engine_is_one_line(tmp_path):
    root = write_task(tmp_path / "t")
    proc = _workbench("env", "install", str(root), "--sandbox", "docker",
                      DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: docker sandbox: no Docker engine reachable"), proc.stderr


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.usefixtures("engine")
def test_the_demo_oracle_scores_the_same_under_docker_as_under_bwrap(tmp_path, demo_task, demo_oracle_inline):
    from tests.conftest import config
    from workbench.trial.pipeline import run_trial

    rec = run_trial(demo_task, config("oracle"), tmp_path, engine="inline", sandbox="docker")
    assert rec.status == "complete" and rec.outcome["replay"] == "succeeded", rec.error
    scores = {"docker": json.loads((tmp_path / "trials" / rec.id / "scores.json").read_text()),
              "bwrap": demo_oracle_inline}
    scores = {k: (s["R"], {lf["id"]: (lf["status"], lf["score"]) for lf in s["leaves"]}) for k, s in scores.items()}
    assert scores["docker"] == scores["bwrap"] and scores["bwrap"][0] > 0.9
