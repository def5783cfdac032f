"""Trajectories: trajectory.jsonl as the session writes it, and its export to Harbor's ATIF (every trajectory a
test run leaves is also judged by Harbor's own validator, tests/conftest.py)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.fake_openai import ScriptedServer, reply
from workbench.batch.matrix import AgentConfig
from workbench.paths import TrialPaths
from workbench.session.run import run_session
from workbench.trajectory import ATIF_VERSION, read_trajectory, to_atif
from workbench.version import __version__

TURNS = [
    {"turn": 1, "timestamp": "2025-01-01T00:00:00.000+00:00", "role": "system", "message": "you reproduce papers"},
    {"turn": 2, "timestamp": "2025-01-01T00:00:01.000+00:00", "role": "user", "message": "the task"},
    {"turn": 3, "timestamp": "2025-01-01T00:00:02.000+00:00", "role": "assistant", "message": "",
     "tool_calls": [{"id": "c1", "name": "bash", "arguments": '{"command": "ls"}'},
                    {"id": "c2", "name": "write_file", "arguments": {"path": "a", "content": "b"}},
                    {"id": "c3", "name": "odd", "arguments": "[1, 2]"}],
     "observations": [{"tool_call_id": "c1", "content": "reproduce.sh"},
                      {"tool_call_id": "elsewhere", "content": "not an answer to a call of this step"}],
     "usage": {"prompt_tokens": 100, "completion_tokens": 20}, "cost_usd": 0.001, "elapsed_sec": 2.5, "retries": 1},
    {"turn": 4, "timestamp": "2025-01-01T00:00:03.000+00:00", "role": "agent", "message": "done"},
]


def _trial(root, records, delivery=None, usage=None):
    tp = TrialPaths(root)
    tp.session.mkdir(parents=True)
    tp.trajectory.write_text("".join(json.dumps(r) + "\n" for r in records) + "\n")  # a blank line at the end
    if delivery is not None:
        tp.delivery.write_text(json.dumps(delivery))
    if usage is not None:
        tp.usage.write_text(json.dumps(usage))
    return tp.root


def test_read_trajectory_gives_one_record_per_turn(tmp_path):
    trial = _trial(tmp_path / "t", TURNS)
    assert read_trajectory(TrialPaths(trial).trajectory) == TURNS


def test_a_small_trajectory_exports_step_by_step(tmp_path):
    trial = _trial(tmp_path / "mini__m__1", TURNS,
                   delivery={"status": "delivered", "agent": "openai", "model": "m-1", "agent_status": "completed",
                             "network": "endpoint", "files": 1, "submission_digest": "d", "starter_digest": None,
                             "wall_sec": 1.0},
                   usage={"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.001})
    atif = to_atif(trial)
    assert (atif["schema_version"], atif["session_id"]) == (ATIF_VERSION, "mini__m__1")
    assert atif["agent"] == {"name": "openai", "version": __version__, "model_name": "m-1",
                             "extra": {"workbench_agent_status": "completed", "network": "endpoint"}}
    assert [(s["step_id"], s["source"]) for s in atif["steps"]] == [(1, "system"), (2, "user"), (3, "agent"),
                                                                    (4, "agent")]
    assert atif["steps"][0] == {"step_id": 1, "timestamp": TURNS[0]["timestamp"], "source": "system",
                                "message": "you reproduce papers"}  # no model on a system step
    step = atif["steps"][2]
    assert step["model_name"] == "m-1"
    assert [c["arguments"] for c in step["tool_calls"]] == [{"command": "ls"}, {"path": "a", "content": "b"},
                                                            {"value": [1, 2]}]
    assert step["observation"]["results"] == [  # a reference only to a call of the same step
        {"source_call_id": "c1", "content": "reproduce.sh"}, {"content": "not an answer to a call of this step"}]
    assert step["metrics"] == {"prompt_tokens": 100, "completion_tokens": 20, "cost_usd": 0.001}
    assert step["extra"] == {"elapsed_sec": 2.5, "retries": 1}
    assert atif["final_metrics"] == {"total_prompt_tokens": 100, "total_completion_tokens": 20,
                                     "total_cost_usd": 0.001, "total_steps": 4}


def test_a_session_without_its_records_still_exports(tmp_path):
    """A session killed before it wrote delivery.json and usage.json: the turns it took are not lost."""
    atif = to_atif(_trial(tmp_path / "t", TURNS[:2]))
    assert atif["agent"]["name"] == "unknown" and "model_name" not in atif["agent"]
    assert atif["final_metrics"]["total_steps"] == 2 and atif["final_metrics"]["total_prompt_tokens"] is None


def test_a_trial_without_a_trajectory_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        to_atif(tmp_path / "empty")


@pytest.mark.slow
def test_trajectory_exports_to_atif(tmp_path, mini_task):
    script = [reply("looking", [("bash", {"command": "ls"}), ("write_file", '{"broken')], usage=(50, 10)),
              reply("", [("finish", {"summary": "done"})], usage=(60, 5))]
    with ScriptedServer(script) as server:
        config = AgentConfig(name="s", agent="openai", model="scripted-1",
                             options={"base_url": server.url},
                             prices={"input_per_mtok": 1.0, "output_per_mtok": 2.0})
        run_session(mini_task, config, tmp_path / "t")
    proc = run_cli("trajectory", str(tmp_path / "t"), "--out", str(tmp_path / "atif.json"))
    assert proc.returncode == 0, proc.stderr
    atif = json.loads((tmp_path / "atif.json").read_text())
    assert atif["schema_version"] == "ATIF-v1.8" and atif["agent"]["model_name"] == "scripted-1"
    assert [s["source"] for s in atif["steps"]] == ["system", "user", "agent", "agent"]
    assert [s["step_id"] for s in atif["steps"]] == [1, 2, 3, 4]
    agent = atif["steps"][2]
    assert agent["tool_calls"][0] == {"tool_call_id": agent["tool_calls"][0]["tool_call_id"], "function_name": "bash",
                                      "arguments": {"command": "ls"}}
    assert agent["tool_calls"][1]["arguments"] == {"raw": '{"broken'}  # a malformed call stays visible
    assert agent["observation"]["results"][0]["source_call_id"] == agent["tool_calls"][0]["tool_call_id"]
    assert agent["metrics"] == {"prompt_tokens": 50, "completion_tokens": 10, "cost_usd": pytest.approx(7e-5)}
    fm = atif["final_metrics"]
    assert (fm["total_prompt_tokens"], fm["total_completion_tokens"], fm["total_steps"]) == (110, 15, 4)
    assert run_cli("trajectory", str(tmp_path)).returncode == 1
