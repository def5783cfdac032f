"""A model's API key reaches the endpoint and nothing else: no record, notebook or export of the run holds it.

A configuration is written into trial.json, run.json and the session notebook's parameters, and a run is
shared (reports, exports, a results store). So credentials are named, never given: ``-o api_key=...`` is
refused before anything is recorded, and ``-o api_key_env=NAME`` reads the key from the environment.
"""

from __future__ import annotations

import pytest

from tests.conftest import run_cli, write_task
from tests.fake_openai import ScriptedServer, reply
from workbench.batch.matrix import AgentConfig, credential_options, load_matrix
from workbench.paths import RunPaths
from workbench.task import load_task
from workbench.trial.pipeline import run_trial, write_single_run_spec

KEY = "sk-live-7f3c9a1e5b"


def test_a_key_in_the_options_is_refused_in_one_line_with_nothing_recorded(tmp_path):
    task = write_task(tmp_path / "mini")
    out = tmp_path / "run"
    r = run_cli("run", str(task), "--agent", "openai", "--model", "m", "-o", "base_url=http://127.0.0.1:9",
                "-o", f"api_key={KEY}", "--out", str(out))
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "api_key_env=NAME" in lines[0], r.stderr
    assert KEY not in r.stderr + r.stdout  # not even echoed back
    assert not out.exists()


@pytest.mark.parametrize("options", [
    {"api_key": KEY},
    {"auth_token": KEY},
    {"config": {"model": {"model_kwargs": {"api_key": KEY}}}},  # a CLI's own settings table
])
def test_every_credential_shaped_option_is_refused(options):
    with pytest.raises(ValueError, match="environment variable"):
        AgentConfig(name="c", agent="cli" if "config" in options else "openai", model="m", options=options)


def test_names_of_variables_and_counts_are_not_credentials():
    assert credential_options({"api_key_env": "K", "env_key": "K", "request": {"max_tokens": 4}}) == []


def test_a_matrix_with_a_key_is_refused(tmp_path):
    task = write_task(tmp_path / "mini")
    matrix = tmp_path / "m.toml"
    matrix.write_text(f'tasks = ["{task}"]\n[[agents]]\nname = "a"\nagent = "openai"\nmodel = "m"\n'
                      f'options = {{ api_key = "{KEY}" }}\n')
    with pytest.raises(Exception, match="api_key_env") as info:
        load_matrix(matrix)
    assert KEY not in str(info.value)


@pytest.mark.slow
def test_the_key_named_by_api_key_env_is_sent_and_written_nowhere(tmp_path, monkeypatch):
    """Through the papermill engine, so the executed session notebook is among the files searched."""
    monkeypatch.setenv("WB_TEST_MODEL_KEY", KEY)
    task = load_task(write_task(tmp_path / "mini"))
    turns = [reply("", [("bash", {"command": "ls"})]), reply("", [("finish", {"summary": "done"})])]
    out = tmp_path / "run"
    with ScriptedServer(turns) as server:
        config = AgentConfig(name="keyed", agent="openai", model="m",
                             options={"base_url": server.url, "api_key_env": "WB_TEST_MODEL_KEY"})
        write_single_run_spec(RunPaths(out), task, config)
        rec = run_trial(task, config, out, engine="papermill")
    assert rec.status == "complete", rec.error
    assert server.auth == [f"Bearer {KEY}"] * 2  # the key was used ...
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".ipynb" for p in files) and any(p.name == "trial.json" for p in files)
    assert [p for p in files if KEY.encode() in p.read_bytes()] == []  # ... and is in no file of the run


def test_a_key_pasted_as_the_variable_name_is_refused_and_not_echoed(tmp_path):
    task = write_task(tmp_path / "mini")
    r = run_cli("run", str(task), "--agent", "openai", "--model", "m", "-o", "base_url=http://127.0.0.1:9",
                "-o", f"api_key_env={KEY}", "--out", str(tmp_path / "run"))
    assert r.returncode != 0 and "must name an environment variable" in r.stderr, r.stderr
    assert KEY not in r.stderr + r.stdout
    assert not (tmp_path / "run").exists()


def test_a_variable_that_is_not_set_is_an_infrastructure_error(tmp_path, monkeypatch):
    monkeypatch.delenv("WB_TEST_MODEL_KEY", raising=False)
    task = write_task(tmp_path / "mini")
    r = run_cli("run", str(task), "--agent", "openai", "--model", "m", "-o", "base_url=http://127.0.0.1:9",
                "-o", "api_key_env=WB_TEST_MODEL_KEY", "--out", str(tmp_path / "run"))
    assert r.returncode != 0
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "WB_TEST_MODEL_KEY" in r.stderr, r.stderr
    assert not (tmp_path / "run").exists()
