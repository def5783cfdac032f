"""Harbor's own code judges our formats: every agent's exported trajectory passes its TrajectoryValidator
(ATIF), and every bundled task.toml loads in its TaskConfig. The whole suite's trajectories are checked
too, at the end of the run (tests/conftest.py prints the ``interop:`` line)."""

from __future__ import annotations

import json

import pytest

from tests.agents.test_cli_and_replay_agents import FAKE_CLI
from tests.conftest import REPO, required_tool_missing, write_task
from tests.fake_openai import ScriptedServer, reply
from tests.interop import harbor, peers_available
from workbench.batch.matrix import AgentConfig
from workbench.session.run import run_session
from workbench.task import find_tasks, load_task
from workbench.trajectory import to_atif


@pytest.fixture(autouse=True)
def _peers():
    if not peers_available():
        required_tool_missing("Harbor in its Python 3.12 venv (bash .ci/peers)")


def _export(trial, path):
    path.write_text(json.dumps(to_atif(trial)))
    return path


@pytest.mark.slow
def test_every_agents_trajectory_passes_harbors_validator(tmp_path, mini_task):
    script = [reply("looking", [("bash", {"command": "ls"}), ("write_file", '{"broken')], usage=(50, 10)),
              reply("text instead of a call", usage=(20, 4)),
              reply("", [("finish", {"summary": "done"})], usage=(60, 5))]
    with ScriptedServer(script) as server:
        run_session(mini_task, AgentConfig(name="s", agent="openai", model="scripted-1",
                                           options={"base_url": server.url}), tmp_path / "openai")
    cli_root = write_task(tmp_path / "cli-task")
    (cli_root / "environment/starter_submission/fake_cli.sh").write_text(FAKE_CLI.replace("%RESULT%", "done"))
    run_session(load_task(cli_root), AgentConfig(name="c", agent="cli", options={"command": "bash fake_cli.sh 1"}),
                tmp_path / "cli")
    recorded = tmp_path / "openai" / "session" / "trajectory.jsonl"
    run_session(mini_task, AgentConfig(name="r", agent="replay", options={"trajectory": str(recorded)}),
                tmp_path / "replay")
    run_session(mini_task, AgentConfig(name="o", agent="oracle"), tmp_path / "oracle")
    files = [_export(tmp_path / n, tmp_path / f"{n}.atif.json") for n in ("openai", "cli", "replay", "oracle")]
    verdict = harbor("trajectory", files)
    assert verdict == {str(f): [] for f in files}, verdict
    cli = json.loads(files[1].read_text())  # the cli agent's one observation answers no tool call of ours
    assert all("source_call_id" not in r for s in cli["steps"] for r in (s.get("observation") or {}).get("results", []))


def test_harbors_validator_rejects_a_broken_reference(tmp_path, mini_task):
    """The control: the validator really runs, and it would catch what our export once did."""
    script = [reply("", [("bash", {"command": "ls"})], usage=(5, 1)), reply("", [("finish", {"summary": "d"})])]
    with ScriptedServer(script) as server:
        run_session(mini_task, AgentConfig(name="s", agent="openai", model="m",
                                           options={"base_url": server.url}), tmp_path / "t")
    atif = to_atif(tmp_path / "t")
    step = next(s for s in atif["steps"] if s.get("observation"))
    step["observation"]["results"][0]["source_call_id"] = "cli"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(atif))
    (errors,) = harbor("trajectory", [bad]).values()
    assert any("source_call_id 'cli'" in e for e in errors), errors


def _keys(d: dict, prefix: str = "") -> set[str]:
    return {k for key, v in d.items() for k in ((_keys(v, f"{prefix}{key}.") if isinstance(v, dict) and v else set())
                                                | {f"{prefix}{key}"})}


def test_bundled_task_tomls_load_in_harbors_task_config():
    """Every bundled task.toml loads, and Harbor keeps every key of it: our replay limits, which Harbor has
    no counterpart for, live under ``[metadata]``, which Harbor keeps whole (a ``[replay]`` section of
    their own was dropped)."""
    import tomllib

    tomls = [t / "task.toml" for t in find_tasks(REPO / "tasks")]
    verdict = harbor("task-config", tomls)
    assert len(verdict) == len(tomls) >= 12 and all(not v["errors"] for v in verdict.values()), verdict
    for path in tomls:
        ours = _keys(tomllib.loads(path.read_text()))
        dropped = ours - _keys(verdict[str(path)]["kept"])
        assert dropped == set(), f"{path}: Harbor drops {sorted(dropped)}"


def test_every_key_harbors_task_config_accepts_is_accepted_by_ours():
    """Our task.toml is strict (a typo is an error with a suggestion), but never about Harbor's own keys:
    an imported Harbor package keeps loading."""
    from workbench.task.model import HARBOR_KEYS

    theirs = harbor("task-keys", [])
    assert set(theirs) == set(HARBOR_KEYS)
    missing = {t: sorted(set(keys) - HARBOR_KEYS[t]) for t, keys in theirs.items() if set(keys) - HARBOR_KEYS[t]}
    assert missing == {}, f"Harbor accepts keys our task.toml refuses: {missing}"
