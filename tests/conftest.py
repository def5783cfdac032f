"""Shared fixtures: small synthetic tasks (host /usr only, fast) and the real demo task (slow)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# other benchmarks' own files (PaperBench, PaperBenchX; MIT, their licences beside them), kept in the repository:
# a clone with nothing beside it runs every test
EXTERNAL = REPO / "tests" / "fixtures" / "external"
DEMO = REPO / "tasks" / "h2-pes"

MINI_RUBRIC = {
    "id": "root",
    "requirements": "mini task",
    "sub_tasks": [
        {"id": "m", "weight": 1, "requirements": "model", "sub_tasks": [
            {"id": "m1", "weight": 1, "task_category": "Modeling", "requirements": "value file exists",
             "check": {"kind": "file_exists", "path": "results/value.json"}}]},
        {"id": "e", "weight": 1, "requirements": "run", "sub_tasks": [
            {"id": "e1", "weight": 1, "task_category": "Execution", "requirements": "replay ok",
             "check": {"kind": "replay_succeeded"}}]},
        {"id": "v", "weight": 2, "requirements": "validate", "sub_tasks": [
            {"id": "v1", "weight": 1, "task_category": "Validation", "requirements": "value is 42",
             "check": {"kind": "json_value", "path": "results/value.json", "key": "value", "target": 42,
                       "abs_tol": 0.5}},
            {"id": "v2", "weight": 1, "task_category": "Validation", "requirements": "an expert reads the log",
             "method": "expert", "evidence_inputs": [{"path": "submission/results/log.txt"}]}]},
    ],
}


# the mini task's image under docker when a test runs Python in it (bwrap's sandbox has the host's /usr)
PYTHON_DOCKERFILE = """FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 && rm -rf /var/lib/apt/lists/*
"""


def write_task(root: Path, *, rubric: dict | None = None, timeout_sec: float = 60, memory_mb: int = 1024,
               cpus: int = 1, outputs: tuple[str, ...] = ("results",), max_processes: int = 256,
               checks_py: str | None = None) -> Path:
    """A minimal valid task that runs on the host's /usr (no install.sh)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "task.toml").write_text(
        f'[task]\nname = "test/{root.name}"\n\n[metadata]\ndomain = "testing"\nfield = "sandboxing"\n'
        f'paper = "none"\n\n[environment]\ncpus = {cpus}\nmemory_mb = {memory_mb}\n\n'
        f"[metadata.replay]\ntimeout_sec = {timeout_sec}\noutputs = {json.dumps(list(outputs))}\n"
        f"max_processes = {max_processes}\n"
    )
    (root / "instruction.md").write_text("Write results/value.json with value 42.\n")
    env = root / "environment"
    (env / "paper").mkdir(parents=True, exist_ok=True)
    (env / "paper" / "paper.md").write_text("The answer is 42.\n")
    (env / "Dockerfile").write_text("FROM debian:bookworm-slim\n")
    starter = env / "starter_submission"
    starter.mkdir(exist_ok=True)
    (starter / "reproduce.sh").write_text("exit 1\n")
    sol = root / "solution"
    sol.mkdir(exist_ok=True)
    (sol / "reproduce.sh").write_text(
        'mkdir -p results\necho \'{"value": 42}\' > results/value.json\necho fine > results/log.txt\n')
    tests = root / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "rubric.json").write_text(json.dumps(rubric or MINI_RUBRIC, indent=2))
    (tests / "SECRET.txt").write_text("private-token-7f3a\n")
    if checks_py:
        (tests / "checks.py").write_text(checks_py)
    return root


def write_files(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture
def host_http():
    """An HTTP server on the host's loopback: (port, paths requested). It answers b"served-by-host"."""
    import http.server
    import threading

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"served-by-host")

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1], hits
    srv.shutdown()


# --- the security summary: attacks tried and attacks that succeeded (a failed attack test) -------------

_ATTACKS: dict[str, dict] = {}  # backend (or "no sandbox") -> {"tried": n, "succeeded": [node ids]}
_BACKEND_ID = re.compile(r"[\[-](bwrap|docker)[\]-]")


def pytest_runtest_logreport(report):
    if report.when == "call" and "attack" in report.keywords:
        m = _BACKEND_ID.search(report.nodeid)
        tally = _ATTACKS.setdefault(m.group(1) if m else "no sandbox", {"tried": 0, "succeeded": []})
        tally["tried"] += 1
        if report.failed:
            tally["succeeded"].append(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    """One line per backend: the same attacks fail under bwrap and docker (and those needing no sandbox);
    then the interop line."""
    _interop_line(terminalreporter)
    for backend, tally in sorted(_ATTACKS.items()):
        terminalreporter.write_line(f"security ({backend}): {tally['tried']} attacks tried, "
                                    f"{len(tally['succeeded'])} succeeded"
                                    + "".join(f"\n  succeeded: {n}" for n in tally["succeeded"]))


# --- interop: every trajectory the suite produced, exported to ATIF and judged by Harbor's validator ------

_INTEROP: dict = {}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    """Export each trial's trajectory.jsonl left under this run's temporary directory and hand them all to
    Harbor's TrajectoryValidator (tests/interop); an invalid one fails the run, as a failed test would."""
    import tempfile

    from tests.interop import harbor, peers_available
    from workbench.trajectory import to_atif

    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or session.config.option.collectonly:
        return
    trials = sorted({p.parent.parent for p in factory.getbasetemp().rglob("session/trajectory.jsonl")})
    if not trials:
        return
    if not peers_available():
        _INTEROP.update(skipped=len(trials))
        if os.environ.get("WORKBENCH_REQUIRE_TEST_TOOLS"):
            session.exitstatus = 1
        return
    out = Path(tempfile.mkdtemp(prefix="interop-"))
    files, unreadable = {}, 0
    for i, trial in enumerate(trials):
        try:
            atif = to_atif(trial)
        except (ValueError, OSError):  # a test's deliberately broken trajectory: nothing to export
            unreadable += 1
            continue
        files[out / f"{i}.json"] = trial
        (out / f"{i}.json").write_text(json.dumps(atif))
    verdict = harbor("trajectory", list(files))
    invalid = {str(files[Path(p)]): errs for p, errs in verdict.items() if errs}
    _INTEROP.update(checked=len(files), invalid=invalid, unreadable=unreadable)
    if invalid:
        session.exitstatus = 1


def _interop_line(terminalreporter) -> None:
    if "skipped" in _INTEROP:
        terminalreporter.write_line(f"interop: {_INTEROP['skipped']} trajectories not checked: Harbor is not "
                                    "installed (bash .ci/peers)")
    elif "checked" in _INTEROP:
        bad = _INTEROP["invalid"]
        terminalreporter.write_line(
            f"interop: {_INTEROP['checked']} trajectories the suite produced, exported to ATIF, "
            f"{_INTEROP['checked'] - len(bad)} valid under Harbor's TrajectoryValidator"
            + (f" ({_INTEROP['unreadable']} deliberately broken ones not exportable)" if _INTEROP["unreadable"] else "")
            + "".join(f"\n  invalid: {t}: {errs[0]}" for t, errs in bad.items()))


@pytest.fixture(scope="session")
def model_server(tmp_path_factory):
    """The base URL (…/v1) of a real llama-server with a small real model, for the session."""
    from tests import model_server as ms

    if not ms.available():
        required_tool_missing("llama-server and its test model (bash .ci/model-server)")
    with ms.ModelServer(free_port(), tmp_path_factory.mktemp("model") / "llama-server.log") as url:
        yield url


@pytest.fixture(scope="session")
def model_server_capped(tmp_path_factory):
    """Like ``model_server``, with every reply capped at 48 tokens by the server (``-n``): for CLIs that send
    no output limit of their own (Codex), whose base-model replies would otherwise run to the context. No
    tool template: with it the model's call is cut at 48 tokens, llama-server answers 500 parsing its own
    truncated output (measured), and Codex retries until it gives up (a clean agent_error, but no turn)."""
    from tests import model_server as ms

    if not ms.available():
        required_tool_missing("llama-server and its test model (bash .ci/model-server)")
    with ms.ModelServer(free_port(), tmp_path_factory.mktemp("model") / "llama-server.log", extra=("-n", "48"),
                        template=None) as url:
        yield url


@pytest.fixture(scope="session")
def agent_cli():
    """Factory: agent_cli(name) -> the install prefix of a real agent CLI (codex, mini-swe-agent)."""
    from tests import model_server as ms

    def prefix(name: str):
        found = ms.agent_clis()
        if name not in found:
            required_tool_missing(f"the {name} CLI (bash .ci/agent-clis)")
        return found[name]

    return prefix


def docker_engine_or_missing() -> None:
    """Skip (or, with WORKBENCH_REQUIRE_TEST_TOOLS=1, fail) when no Docker engine answers."""
    from workbench.sandbox.docker.sandbox import DockerSandbox

    try:
        ok = DockerSandbox().available()[0]
    except Exception:
        ok = False
    if not ok:
        required_tool_missing("a Docker engine (bash .ci/docker-base starts one)")


@pytest.fixture(params=["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request):
    """Both sandboxes: their guarantees are the same, so are the tests that check them."""
    if request.param == "docker":
        docker_engine_or_missing()
    return request.param


@pytest.fixture
def mini_task(tmp_path):
    from workbench.task import load_task

    return load_task(write_task(tmp_path / "mini"))


@pytest.fixture
def submission(tmp_path):
    """Factory: submission(files) -> a directory holding those files."""
    counter = iter(range(10_000))

    def make(files: dict[str, str]) -> Path:
        return write_files(tmp_path / f"submission{next(counter)}", files)

    return make


def as_in_a_terminal() -> None:
    """``preexec_fn`` for a command a test interrupts: Ctrl-C's default action, as a terminal gives it. A test
    run started in the background by a shell without job control inherits SIGINT ignored, and a Python that
    starts with SIGINT ignored never raises KeyboardInterrupt, so the Ctrl-C under test would never arrive."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """The real command line, as a user runs it."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, env=env, timeout=timeout)


@pytest.fixture(scope="session")
def demo_task():
    from workbench.sandbox.environments import install_env
    from workbench.task import load_task

    task = load_task(DEMO)
    install_env(task)
    return task


MATRIX = """
tasks = ["{task}"]
attempts = {attempts}
[[agents]]
name = "oracle"
agent = "oracle"
[[agents]]
name = "nop"
agent = "nop"
"""


@pytest.fixture(scope="session")
def demo_batch(demo_task, tmp_path_factory):
    """The acceptance batch: demo task x {oracle, nop} x 2 attempts through papermill, 2 workers."""
    from workbench.batch.run import run_batch

    root = tmp_path_factory.mktemp("demo-batch")
    matrix = root / "matrix.toml"
    matrix.write_text(MATRIX.format(task=DEMO, attempts=2))
    result = run_batch(matrix, root / "run", workers=2, progress=False)
    return root / "run", result


@pytest.fixture(scope="session")
def demo_oracle_inline(demo_task, tmp_path_factory) -> dict:
    """The demo oracle's scores.json through the inline engine under bwrap: what the other engine and the
    other sandbox backend are compared with (one replay of the demo for both)."""
    import json

    from workbench.paths import RunPaths
    from workbench.trial.pipeline import run_trial

    out = tmp_path_factory.mktemp("demo-oracle-inline")
    rec = run_trial(demo_task, config("oracle"), out, engine="inline", sandbox="bwrap")
    assert rec.status == "complete" and rec.outcome["replay"] == "succeeded", rec.error
    return json.loads(RunPaths(out).trial(rec.id).scores.read_text())


def config(agent: str, **kw):
    from workbench.batch.matrix import AgentConfig

    return AgentConfig(name=kw.pop("name", agent), agent=agent, **kw)


def required_tool_missing(what: str) -> None:
    """Skip on a developer machine without ``what``; fail under `make test`, which installs it."""
    if os.environ.get("WORKBENCH_REQUIRE_TEST_TOOLS"):
        pytest.fail(f"{what} is required here (make test installs it)")
    pytest.skip(f"{what} is not installed")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(argv: list[str], ready_url: str, *, env: dict[str, str] | None = None, timeout: float = 90):
    """Start a server process, wait until ``ready_url`` answers, yield the process, stop it."""
    import time
    import urllib.request

    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(ready_url, timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"{argv[2] if len(argv) > 2 else argv[0]} did not start: {proc.stderr.read()[-2000:]}")
            time.sleep(0.3)
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(20)


CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO / "test-artifacts"  # screenshots of browser tests


@pytest.fixture
def browser():
    """Debian's chromium driven by Playwright's python package (no browser download)."""
    import shutil

    chromium = shutil.which("chromium")
    if not chromium:
        required_tool_missing("chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server (Debian's package) in a temporary cluster on 127.0.0.1; yields its base URL."""
    import pwd
    import shutil
    import tempfile

    initdb = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not initdb:
        required_tool_missing("PostgreSQL (apt-get install postgresql)")
    bindir = initdb[-1].parent
    root = Path(tempfile.mkdtemp(prefix="workbench-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        pw = pwd.getpwnam("postgres")
        os.chown(root, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    data = root / "data"
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "workbench", "-N"],
                   check=True, capture_output=True)
    subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w", "-o",
                    f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                   check=True, capture_output=True)
    try:
        yield f"postgresql+psycopg://workbench@127.0.0.1:{port}"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    """A real single-node SLURM cluster (munged, slurmctld, slurmd; 2 CPUs) for the session, found by
    ``SLURM_CONF`` (set in this process's environment while it runs, so sbatch from the library finds it)."""
    import tempfile

    from tests import slurm_cluster as sc

    if not sc.available():
        required_tool_missing("SLURM and munge (apt-get install slurm-wlm munge)")
    root = Path(tempfile.mkdtemp(prefix="workbench-slurm-"))  # munged wants a path without group/other write
    old = os.environ.get("SLURM_CONF")
    with sc.SlurmCluster(root) as cluster:
        os.environ["SLURM_CONF"] = str(cluster.conf)
        try:
            yield cluster
        finally:
            if old is None:
                os.environ.pop("SLURM_CONF", None)
            else:
                os.environ["SLURM_CONF"] = old
    import shutil

    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """A fresh, empty results store: a SQLite file, then a new database on the real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    from sqlalchemy import create_engine, text

    base = request.getfixturevalue("postgres_server")
    name = f"t{free_port()}_{os.getpid()}"
    engine = create_engine(f"{base}/postgres", isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return f"{base}/{name}"


@pytest.fixture
def simulated_gpus(monkeypatch):
    """make(n): a /dev-like directory with n simulated GPUs, named as the NVIDIA driver names its nodes (each a
    clone of /dev/null: opening and writing it works), and the control nodes, used as the host's."""
    if os.geteuid() != 0:
        pytest.skip("making device nodes needs root")
    made = []

    def make(n: int) -> Path:
        d = Path(tempfile.mkdtemp(prefix="workbench-gpu-dev-", dir="/tmp"))  # reachable by the sandbox user
        os.chmod(d, 0o755)
        for name in [f"nvidia{i}" for i in range(n)] + (["nvidiactl", "nvidia-uvm"] if n else []):
            os.mknod(d / name, 0o666 | 0o020000, os.makedev(1, 3))  # S_IFCHR, the null device's numbers
            os.chmod(d / name, 0o666)
        monkeypatch.setenv("WORKBENCH_GPU_DEV", str(d))
        made.append(d)
        return d

    locks = Path(tempfile.mkdtemp(prefix="workbench-gpu-locks-", dir="/tmp"))
    monkeypatch.setenv("WORKBENCH_GPU_LOCKS", str(locks))
    yield make
    for d in [*made, locks]:
        shutil.rmtree(d, ignore_errors=True)
