"""Host task environments are keyed by the content of the files that define them, not by the task."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import run_cli, write_task
from workbench.env import env_dir, env_info, install_env
from workbench.errors import WorkbenchError
from workbench.task import load_task

INSTALL = 'mkdir -p "$WORKBENCH_ENV/bin"\ncp requirements.txt "$WORKBENCH_ENV/"\necho "$0" >> "$WORKBENCH_ENV/runs"\n'


@pytest.fixture
def env_task(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_ENVS", str(tmp_path / "envs"))
    root = write_task(tmp_path / "tasks" / "one")
    (root / "environment" / "install.sh").write_text(INSTALL)
    (root / "environment" / "requirements.txt").write_text("numpy==2.1.0\n")
    return root


def test_every_file_install_sh_may_read_keys_the_environment(env_task):
    d = env_dir(load_task(env_task))
    assert d.parent.name == "envs" and d.name.startswith("env-") and len(d.name) == len("env-") + 16
    (env_task / "environment" / "requirements.txt").write_text("numpy==2.1.1\n")
    changed = env_dir(load_task(env_task))
    assert changed != d
    (env_task / "environment" / "constraints.txt").write_text("scipy<2\n")
    assert env_dir(load_task(env_task)) not in (d, changed)


def test_the_paper_starter_and_dockerfile_do_not(env_task):
    d = env_dir(load_task(env_task))
    (env_task / "environment" / "paper" / "paper.md").write_text("a revised paper\n")
    (env_task / "environment" / "starter_submission" / "reproduce.sh").write_text("echo start\n")
    (env_task / "environment" / "Dockerfile").write_text("FROM debian:trixie-slim\n")
    assert env_dir(load_task(env_task)) == d


def test_a_copied_task_finds_the_environment_already_installed(env_task, tmp_path):
    d = install_env(load_task(env_task))
    assert (d / "requirements.txt").read_text() == "numpy==2.1.0\n"
    copy = shutil.copytree(env_task, tmp_path / "elsewhere" / "renamed")
    assert install_env(load_task(copy)) == d
    assert len((d / "runs").read_text().splitlines()) == 1  # install.sh ran once
    info = env_info(load_task(copy))
    assert info["dir"] == str(d) and info["installed_by"]["task"] == "one"
    assert info["digest"] == env_info(load_task(env_task))["digest"]
    shown = json.loads(run_cli("env", "show", str(copy)).stdout)
    assert shown["dir"] == str(d) and shown["installed_by"] == {"task": "one", "root": str(env_task)}
    assert set(shown["files"]) == {"install.sh", "requirements.txt"}


def test_after_a_changed_pin_the_environment_must_be_installed_again(env_task):
    install_env(load_task(env_task))
    (env_task / "environment" / "requirements.txt").write_text("numpy==2.1.1\n")
    with pytest.raises(WorkbenchError, match="not installed .*env-.*workbench env install"):
        env_info(load_task(env_task))
    out = run_cli("env", "show", str(env_task))
    assert out.returncode != 0 and "not installed" in out.stderr
