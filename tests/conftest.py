"""Shared fixtures: small synthetic tasks (host /usr only, fast) and the real demo task (slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EXTERNAL = SHARED / "external"
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


def write_task(root: Path, *, rubric: dict | None = None, timeout_sec: float = 60, memory_mb: int = 1024,
               cpus: int = 1, outputs: tuple[str, ...] = ("results",), max_processes: int = 256,
               checks_py: str | None = None) -> Path:
    """A minimal valid task that runs on the host's /usr (no install.sh)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "task.toml").write_text(
        f'[task]\nname = "test/{root.name}"\n\n[metadata]\ndomain = "testing"\nfield = "sandboxing"\n'
        f'paper = "none"\n\n[environment]\ncpus = {cpus}\nmemory_mb = {memory_mb}\n\n'
        f"[replay]\ntimeout_sec = {timeout_sec}\noutputs = {json.dumps(list(outputs))}\n"
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


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """The real command line, as a user runs it."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, env=env, timeout=timeout)


@pytest.fixture(scope="session")
def demo_task():
    from workbench.env import install_env
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
    from workbench.batch import run_batch

    root = tmp_path_factory.mktemp("demo-batch")
    matrix = root / "matrix.toml"
    matrix.write_text(MATRIX.format(task=DEMO, attempts=2))
    result = run_batch(matrix, root / "run", workers=2, progress=False)
    return root / "run", result


def config(agent: str, **kw):
    from workbench.matrix import AgentConfig

    return AgentConfig(name=kw.pop("name", agent), agent=agent, **kw)
