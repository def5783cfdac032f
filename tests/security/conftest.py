"""Hostile submissions: each test is one attack (marker ``attack``) run through a real clean replay and
scoring of a small task, asserting that the attack failed and that the trial recorded why.

Every attack that replays runs under both sandboxes (the ``backend`` fixture of tests/conftest.py), which
prints a line per backend, ``security (docker): N attacks tried, M succeeded``; an attack "succeeded" when
its test failed. Under docker the mini task's image adds python3 to the base (the attacks are Python).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PYTHON_DOCKERFILE, write_files, write_task
from workbench.replay.trial import replay_trial
from workbench.scoring import score_trial
from workbench.task import load_task

CANARY = "workbench-canary-9c1e"  # text planted in host files an attack tries to reach


@dataclass
class Outcome:
    trial: Path
    prov: object
    scores: object | None

    @property
    def stdout(self) -> str:
        return (self.trial / "replay" / "stdout.log").read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return (self.trial / "replay" / "stderr.log").read_text(errors="replace")

    @property
    def reasons(self) -> str:
        return "; ".join(self.prov.failure_reasons)

    def output(self, name: str) -> str:
        return (self.trial / "evidence" / "submission" / "results" / name).read_text(errors="replace")

    def evidence_text(self) -> str:
        """Every regular file of the evidence, concatenated (symlinks are not followed)."""
        out = []
        for dirpath, _, files in os.walk(self.trial / "evidence"):
            for f in files:
                p = Path(dirpath) / f
                if p.is_file() and not p.is_symlink():
                    out.append(p.read_bytes().decode("utf-8", "replace"))
        return "\n".join(out)


def hostile_task(root: Path, **replay_limits) -> object:
    """The mini task with tight limits: 20 s, 512 MB RAM, 64 MB storage, 2000 files, 1 MB logs, 16 MB files."""
    write_task(root, timeout_sec=replay_limits.pop("timeout_sec", 20), memory_mb=512, max_processes=64)
    toml = (root / "task.toml").read_text()
    toml = toml.replace("memory_mb = 512", "memory_mb = 512\nstorage_mb = 64")
    extra = {"max_files": 2000, "max_log_mb": 1, "max_file_mb": 16, **replay_limits}
    toml += "".join(f"{k} = {v}\n" for k, v in extra.items())
    (root / "task.toml").write_text(toml)
    # the attacks are Python and shell: under docker the image needs what the host's /usr gives bwrap
    (root / "environment" / "Dockerfile").write_text(PYTHON_DOCKERFILE)
    return load_task(root)


@pytest.fixture
def task(tmp_path):
    return hostile_task(tmp_path / "task")


@pytest.fixture
def attack(tmp_path, task, backend):
    """attack(reproduce_sh, files=None, task=None, score=True) -> Outcome of a clean replay (and scoring)."""
    counter = iter(range(1000))

    def run(script: str, files: dict[str, str] | None = None, task_=None, score: bool = True) -> Outcome:
        n = next(counter)
        sub = write_files(tmp_path / f"sub{n}", {"reproduce.sh": script, **(files or {})})
        t = task_ or task
        trial = tmp_path / f"trial{n}"
        prov = replay_trial(t, sub, trial, sandbox=backend)
        return Outcome(trial, prov, score_trial(t, trial) if score else None)

    return run


def no_special_bits(root: Path) -> list[str]:
    """Evidence files that are setuid, setgid or writable."""
    bad = []
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            p = Path(dirpath) / n
            if p.is_symlink():
                continue
            mode = p.stat().st_mode
            if mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
                bad.append(f"{p}: {oct(mode)}")
    return bad


def host_canary(tmp_path: Path) -> Path:
    """A root-only host file holding the canary text, outside anything the sandbox mounts."""
    p = tmp_path / "host-secret.txt"
    p.write_text(CANARY + "\n")
    p.chmod(0o600)
    return p


def sandbox_processes(uid: int, wait: float = 3.0) -> int:
    """Live (not zombie) processes of a sandbox uid, after giving the kernel ``wait`` seconds to finish them."""
    import time

    deadline = time.monotonic() + wait
    while True:
        n = sum(1 for e in Path("/proc").iterdir() if e.name.isdigit() and _alive(e, uid))
        if n == 0 or time.monotonic() > deadline:
            return n
        time.sleep(0.1)


def _alive(entry: Path, uid: int) -> bool:
    try:
        if entry.stat().st_uid != uid:
            return False
        return (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def scores_json(trial: Path) -> dict:
    return json.loads((trial / "scores.json").read_text())
