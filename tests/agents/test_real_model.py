"""The openai agent and the endpoint client against a real server and a real model (marker ``model``).
Gemma 3 270M is a base model: it rarely does the task. The tests assert what must hold whatever it says:
the protocol, the budgets, the trajectory, the usage, and a trial that is scored or clearly failed."""

from __future__ import annotations

import json

import pytest

from tests.conftest import free_port, required_tool_missing
from tests.model_server import MODEL_NAME, ModelServer, available
from workbench.batch.matrix import AgentConfig
from workbench.paths import RunPaths
from workbench.trajectory import read_trajectory
from workbench.trial.pipeline import run_trial

pytestmark = pytest.mark.model


def test_the_server_speaks_the_protocol_the_client_expects(model_server):
    import openai

    client = openai.OpenAI(base_url=model_server, api_key="none")
    resp = client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Say hi."}],
                                          max_tokens=16, temperature=0)
    choice = resp.choices[0]
    assert choice.finish_reason in ("stop", "length") and resp.usage.completion_tokens <= 16
    assert resp.usage.prompt_tokens > 0
    again = client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Say hi."}],
                                           max_tokens=16, temperature=0)
    assert again.choices[0].message.content == choice.message.content  # deterministic at temperature 0
    with pytest.raises(openai.BadRequestError):  # a prompt past the context: a clean 400, not a hang
        client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "word " * 6000}],
                                       max_tokens=4)


def session(task, url, out, max_turns=4, max_tokens=96):
    config = AgentConfig(name="gemma", agent="openai", model=MODEL_NAME, max_turns=max_turns,
                         options={"base_url": url, "max_attempts": 2,
                                  "request": {"max_tokens": max_tokens, "temperature": 0}})
    rec = run_trial(task, config, out, engine="inline")
    return rec, RunPaths(out).trial(rec.id)


def test_an_openai_agent_session_on_a_real_model_ends_within_its_budgets(tmp_path, mini_task, model_server):
    rec, tp = session(mini_task, model_server, tmp_path / "runs")
    delivery = json.loads(tp.delivery.read_text())
    assert rec.status != "infra_error", rec
    assert delivery["agent_status"] in ("completed", "budget_exhausted", "timeout", "refused", "agent_error")
    turns = [r for r in read_trajectory(tp.trajectory) if r.get("usage")]
    usage = json.loads(tp.usage.read_text())
    assert 1 <= len(turns) <= 4 and usage["turns"] == len(turns)  # the turn budget held
    # usage is the server's own counts, summed
    assert usage["input_tokens"] == sum(t["usage"]["prompt_tokens"] for t in turns) > 0
    assert usage["output_tokens"] == sum(t["usage"]["completion_tokens"] for t in turns)
    assert rec.outcome is not None and 0.0 <= rec.outcome["R"] <= 1.0  # scored, whatever was delivered


def test_truncated_repeated_and_missing_tool_calls_are_answered_and_the_session_ends_in_budget(
        tmp_path, mini_task, model_server):
    """48 tokens a reply: calls cut mid-JSON, the same call again, text instead of a call (measured, all
    three). Every malformed call is answered with its error and the raw text; the history stays valid for
    a server that parses it (llama-server answers 500 to a truncated call echoed back)."""
    rec, tp = session(mini_task, model_server, tmp_path / "runs", max_turns=6, max_tokens=48)
    delivery = json.loads(tp.delivery.read_text())
    assert rec.status == "complete" and rec.outcome is not None, rec.error
    assert delivery["agent_status"] in ("budget_exhausted", "completed")
    turns = [r for r in read_trajectory(tp.trajectory) if r.get("usage")]
    calls = [(c, o) for t in turns for c, o in zip(t.get("tool_calls") or [], t.get("observations") or [],
                                                   strict=True)]
    assert calls, "the template's demonstrated call makes the model call tools"
    assert len(turns) <= 6
    for call, obs in calls:
        try:
            ok = isinstance(json.loads(call["arguments"] or "{}"), dict)
        except json.JSONDecodeError:
            ok = False
        if not ok:
            assert obs["content"].startswith(f"error: malformed arguments for {call['name']}")
            assert "you sent:" in obs["content"]


@pytest.fixture(scope="module")
def small_context_server(tmp_path_factory):
    if not available():
        required_tool_missing("llama-server and its test model (bash .ci/model-server)")
    with ModelServer(free_port(), tmp_path_factory.mktemp("model") / "small.log", context=1024) as url:
        yield url


def test_a_session_that_outgrows_the_context_is_the_agents_failure_and_still_scored(
        tmp_path, mini_task, model_server, small_context_server):
    """The prompt grows past 1,024 tokens on the second turn: the server's clean 400 ends the session as
    agent_error (the submission kept and scored), not an endpoint fault withheld from the results."""
    rec, tp = session(mini_task, small_context_server, tmp_path / "runs", max_turns=6, max_tokens=48)
    delivery = json.loads(tp.delivery.read_text())
    assert rec.status == "complete" and rec.outcome is not None, rec.error
    assert delivery["agent_status"] == "agent_error"
    assert "the endpoint rejected the request: 400" in delivery["message"]
    assert json.loads(tp.usage.read_text())["turns"] >= 1
