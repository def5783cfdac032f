"""The openai agent and the endpoint client against a real server and a real model (marker ``model``).
Gemma 3 270M is a base model: it rarely does the task. The tests assert what must hold whatever it says:
the protocol, the budgets, the trajectory, the usage, and a trial that is scored or clearly failed."""

from __future__ import annotations

import json

import pytest

from tests.model_server import MODEL_NAME
from workbench.matrix import AgentConfig
from workbench.paths import RunPaths
from workbench.pipeline import run_trial
from workbench.trajectory import read_trajectory

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


def test_an_openai_agent_session_on_a_real_model_ends_within_its_budgets(tmp_path, mini_task, model_server):
    config = AgentConfig(name="gemma", agent="openai", model=MODEL_NAME, max_turns=4,
                         options={"base_url": model_server, "api_key": "none", "max_attempts": 2,
                                  "request": {"max_tokens": 96, "temperature": 0}})
    rec = run_trial(mini_task, config, tmp_path / "runs", engine="inline")
    tp = RunPaths(tmp_path / "runs").trial(rec.id)
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
