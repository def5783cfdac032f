import json

import pytest

from workbench.agents import AGENTS, TaskView, get_agent
from workbench.errors import WorkbenchError
from workbench.session import run_session


def test_registry():
    assert {"oracle", "nop", "refuse", "openai", "cli", "replay"} <= set(AGENTS)
    with pytest.raises(WorkbenchError, match="unknown agent 'gpt'"):
        get_agent("gpt")


def test_the_task_view_holds_only_public_parts(mini_task):
    view = TaskView.of(mini_task)
    public = {f.name for f in view.__dataclass_fields__.values()}
    assert public == {"task_id", "instruction", "paper_dir", "timeout_sec", "cpus", "memory_mb"}
    assert "42" in view.instruction and view.paper_dir.name == "paper"
    assert not get_agent("nop").privileged and get_agent("oracle").privileged


def test_oracle_delivers_the_solution(mini_task, tmp_path):
    d = run_session(mini_task, {"name": "oracle", "agent": "oracle"}, tmp_path / "t")
    assert d.status == "delivered" and d.agent_status == "completed"
    sub = tmp_path / "t/session/submission"
    assert (sub / "reproduce.sh").read_text() == (mini_task.root / "solution/reproduce.sh").read_text()
    lines = (tmp_path / "t/session/trajectory.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["role"] == "agent"
    assert json.loads((tmp_path / "t/session/usage.json").read_text())["wall_sec"] >= 0


def test_nop_delivers_the_starter_unchanged(mini_task, tmp_path):
    d = run_session(mini_task, {"name": "nop", "agent": "nop"}, tmp_path / "t")
    assert d.status == "starter_only" and d.submission_digest == d.starter_digest


def test_delivery_probe_says_absent_without_reproduce_sh(mini_task, tmp_path):
    (mini_task.root / "environment/starter_submission/reproduce.sh").unlink()
    assert run_session(mini_task, {"name": "nop", "agent": "nop"}, tmp_path / "t").status == "absent"
