"""Host task environments: keyed by the content of the files that define them (not by the task), installed
once by install.sh (again with force), and where they live; a task without install.sh runs on the host's /usr."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_task
from workbench.errors import WorkbenchError
from workbench.sandbox.environments import env_dir, env_info, environment_for, envs_root, install_env
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


def test_a_task_without_install_sh_runs_on_the_hosts_usr(mini_task, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_ENVS", str(tmp_path / "envs"))
    assert env_dir(mini_task) is None and install_env(mini_task) is None
    info = env_info(mini_task)
    assert (info["dir"], info["kind"]) == (None, "host") and len(info["digest"]) == 64
    assert environment_for(mini_task, "bwrap") == (info, None)  # what the bwrap sandbox is given
    assert not (tmp_path / "envs").exists()  # nothing installed


def test_a_failing_install_says_its_exit_code_and_leaves_it_uninstalled(env_task):
    (env_task / "environment" / "install.sh").write_text('mkdir -p "$WORKBENCH_ENV"\nexit 3\n')
    task = load_task(env_task)
    with pytest.raises(WorkbenchError, match="install.sh failed with exit code 3"):
        install_env(task)
    with pytest.raises(WorkbenchError, match="not installed"):
        env_info(task)


def test_force_installs_again_from_scratch_and_say_hears_only_real_installs(env_task):
    task = load_task(env_task)
    heard: list[str] = []
    d = install_env(task, say=heard.append)
    assert len(heard) == 2 and heard[0].startswith("installing the environment of one into ")
    assert heard[1].startswith("environment of one installed in ")
    (d / "stale").write_text("left by the first install")
    assert install_env(task, say=heard.append) == d and len(heard) == 2  # already there: nothing to say
    install_env(task, force=True)
    assert not (d / "stale").exists() and len((d / "runs").read_text().splitlines()) == 1
    marker = json.loads((d / ".workbench-env.json").read_text())
    assert marker["installed_by"] == {"task": "one", "root": str(env_task)} and marker["packages"] is None
    assert set(marker["files"]) == {"install.sh", "requirements.txt"}


def test_environments_live_outside_any_home_for_root_and_in_the_cache_otherwise(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_ENVS", str(tmp_path / "mine"))
    assert envs_root() == tmp_path / "mine"
    monkeypatch.delenv("WORKBENCH_ENVS")
    monkeypatch.setattr("workbench.sandbox.environments.os.geteuid", lambda: 0)
    assert envs_root() == Path("/opt/workbench/envs")
    monkeypatch.setattr("workbench.sandbox.environments.os.geteuid", lambda: 1000)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert envs_root() == tmp_path / "cache" / "workbench" / "envs"
