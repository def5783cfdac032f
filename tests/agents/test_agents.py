"""The agent registry and what an agent is shown of a task (sessions: tests/session/test_session.py)."""

import pytest

from workbench.agents import AGENTS, PublicTask, get_agent
from workbench.errors import WorkbenchError


def test_registry():
    assert {"oracle", "nop", "refuse", "openai", "cli", "replay"} <= set(AGENTS)
    with pytest.raises(WorkbenchError, match="unknown agent 'gpt'"):
        get_agent("gpt")


def test_the_task_view_holds_only_public_parts(mini_task):
    view = PublicTask.of(mini_task)
    public = {f.name for f in view.__dataclass_fields__.values()}
    assert public == {"task_id", "instruction", "paper_dir", "timeout_sec", "cpus", "memory_mb", "context_dir",
                      "gpus"}
    assert "42" in view.instruction and view.paper_dir.name == "paper"
    assert view.context_dir is None  # only a discovery controller shows a context, of its own making
    assert not get_agent("nop").privileged and get_agent("oracle").privileged
