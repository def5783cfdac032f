"""The CLIs' own logs read into trajectory steps and usage (no CLI needed: logs as the CLIs write them)."""

from __future__ import annotations

import json

from workbench.agents.base import Budget
from workbench.agents.cli_agent import CLIAgent, read_log
from workbench.agents.cli_logs import MINI_MARKER, codex_steps, mini_steps

CODEX = "\n".join(json.dumps(e) for e in [
    {"type": "thread.started", "thread_id": "t"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "look first"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "ls",
                                        "aggregated_output": "a.py\n", "exit_code": 0}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "done"}},
    {"type": "turn.completed", "usage": {"input_tokens": 500, "output_tokens": 20}},
]) + "\nnot json\n"


def test_codex_events_become_steps_with_the_turns_usage():
    steps, usage = codex_steps(CODEX)
    assert [s["message"] for s in steps] == ["look first", "", "done"]
    assert steps[1]["tool_calls"][0] == {"id": "item_1", "name": "shell", "arguments": {"command": "ls"}}
    assert steps[1]["observations"] == [{"tool_call_id": "item_1", "content": "a.py\n"}]
    assert steps[-1]["usage"] == {"prompt_tokens": 500, "completion_tokens": 20} and usage.turns == 1


def _response(content, p, c):
    return {"choices": [{"message": {"content": content}}], "usage": {"prompt_tokens": p, "completion_tokens": c}}


MINI = {"info": {"exit_status": "LimitsExceeded"}, "messages": [
    {"role": "system", "content": "sys"}, {"role": "user", "content": "task"},
    {"role": "user", "content": "format error: one action please",  # a rejected reply, stored as the error
     "extra": {"response": _response("rambling", 800, 64)}},
    {"role": "assistant", "content": "THOUGHT\n```bash\nls\n```", "extra": {
        "actions": [{"command": "ls"}], "response": _response("THOUGHT", 900, 30)}},
    {"role": "user", "content": "<output>a.py</output>"},
    {"role": "exit", "content": "LimitsExceeded"}]}


def test_mini_swe_agent_trajectory_every_model_call_a_step_rejected_replies_included():
    steps, usage, status = mini_steps(MINI)
    assert status == "LimitsExceeded" and usage.turns == 2
    assert (usage.prompt_tokens, usage.completion_tokens) == (1700, 94)
    assert steps[0]["message"] == "rambling" and "format error" in steps[0]["observations"][0]["content"]
    assert steps[1]["tool_calls"][0]["arguments"] == {"command": "ls"}
    assert "a.py" in steps[1]["observations"][0]["content"]


def test_the_mini_preset_prints_its_trajectory_after_the_marker():
    usage, final, steps = read_log("mini-swe-agent", "rich output\n" + MINI_MARKER + "\n" + json.dumps(MINI))
    assert len(steps) == 2 and usage.prompt_tokens == 1700 and "LimitsExceeded" in final
    assert read_log("mini-swe-agent", "no marker: mini crashed") == (read_log("mini-swe-agent", "")[0], "", [])


def test_codex_against_a_base_url_gets_its_provider_in_the_sandbox_home():
    agent = CLIAgent(model="m", options={"preset": "codex", "base_url": "http://gpu-node:8080/v1",
                                         "system_prompt": "Be brief.", "config": {"model_context_window": 4096}})
    command = agent.command(Budget(wall_sec=10))[0]
    assert 'cat > "$HOME/.codex/config.toml"' in command and 'base_url = "http://gpu-node:8080/v1"' in command
    assert 'wire_api = "responses"' in command and "model_context_window = 4096" in command
    assert 'model_instructions_file = "/tmp/.codex/instructions.md"' in command and "Be brief." in command
    assert command.endswith("</dev/null")
