"""Real agent CLIs (Codex, mini-swe-agent, from .ci/agent-clis) in the session sandbox against a real model
server (marker ``model``), with network policy ``endpoint``: the sandbox reaches only the model's URL. Gemma 3
270M is a base model and fails the task; the tests assert what must hold whatever it says: a session that ends
within its budgets, a trajectory from the CLI's own log, usage from the CLI's own report, and a scored trial."""

from __future__ import annotations

import json
import re

import pytest

from tests.model_server import MODEL_NAME
from workbench.agents.base import AgentStartError
from workbench.batch.matrix import AgentConfig
from workbench.paths import RunPaths
from workbench.trajectory import read_trajectory
from workbench.trial.pipeline import run_trial

pytestmark = pytest.mark.model
STATUSES = ("completed", "budget_exhausted", "timeout", "refused", "agent_error")


def _trial(tmp_path, mini_task, config):
    rec = run_trial(mini_task, config, tmp_path / "runs", engine="inline")
    tp = RunPaths(tmp_path / "runs").trial(rec.id)
    delivery = json.loads(tp.delivery.read_text())
    assert rec.status != "infra_error", rec
    assert delivery["agent_status"] in STATUSES and delivery["network"] == "endpoint", delivery
    assert rec.outcome is not None and 0.0 <= rec.outcome["R"] <= 1.0  # scored, whatever was delivered
    return rec, delivery, read_trajectory(tp.trajectory), json.loads(tp.usage.read_text())


def test_codex_in_the_sandbox_against_a_local_model(tmp_path, mini_task, model_server_capped, agent_cli,
                                                    monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "none")  # llama-server accepts any key; codex wants its variable set
    config = AgentConfig(name="codex-gemma", agent="cli", model=MODEL_NAME, network="endpoint",
                         options={"preset": "codex", "prefix": str(agent_cli("codex")), "env": ["OPENAI_API_KEY"],
                                  "base_url": model_server_capped,
                                  # codex's own instructions do not fit the small model's 4096-token context
                                  "system_prompt": "You are a coding agent. Run shell commands to do the task.",
                                  "config": {"model_context_window": 4096}})
    rec, delivery, steps, usage = _trial(tmp_path, mini_task, config)
    assert steps[0]["role"] == "system" and "codex-cli" in (steps[0].get("cli_version") or "")
    reported = [s for s in steps if s.get("usage")]
    assert reported and usage["turns"] >= 1  # codex's turn.completed events, its own counts
    assert usage["input_tokens"] == sum(s["usage"]["prompt_tokens"] for s in reported) > 0
    assert usage["output_tokens"] == sum(s["usage"]["completion_tokens"] for s in reported) > 0


def test_mini_swe_agent_in_the_sandbox_against_a_local_model(tmp_path, mini_task, model_server, agent_cli,
                                                             monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    config = AgentConfig(name="mini-gemma", agent="cli", model=MODEL_NAME, network="endpoint", max_turns=2,

                         options={"preset": "mini-swe-agent", "prefix": str(agent_cli("mini-swe-agent")),
                                  "env": ["OPENAI_API_KEY"], "base_url": model_server,
                                  "config_file": "mini_textbased.yaml",  # a base model: no tool calls
                                  "config": {"model.model_kwargs.max_tokens": 64,
                                             "model.model_kwargs.temperature": 0}})
    rec, delivery, steps, usage = _trial(tmp_path, mini_task, config)
    replies = [s for s in steps if s.get("usage")]
    assert 1 <= len(replies) <= 2 and usage["turns"] == len(replies)  # its step limit: the turn budget
    assert usage["input_tokens"] == sum(s["usage"]["prompt_tokens"] for s in replies) > 0
    assert all(s["usage"]["completion_tokens"] <= 64 for s in replies)
    assert "mini-swe-agent exit status" in steps[-1]["message"] or steps[-1]["message"] == "the CLI ended"


@pytest.mark.parametrize("preset", ["codex", "mini-swe-agent"])
def test_a_missing_cli_or_credential_is_an_infra_error_with_its_cause(tmp_path, mini_task, preset, monkeypatch):
    """An infrastructure error with a one-line cause, never a scored 0."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    base = {"preset": preset, "base_url": "http://127.0.0.1:9/v1"}
    cases = [({}, "needs credentials: set one of OPENAI_API_KEY"),
             ({"prefix": str(tmp_path / "nowhere")}, f"is not installed (in {tmp_path / 'nowhere'}/bin")]
    for extra, cause in cases:
        config = AgentConfig(name="x", agent="cli", model=MODEL_NAME, network="endpoint", options={**base, **extra})
        with pytest.raises(AgentStartError, match=re.escape(cause)) as err:
            run_trial(mini_task, config, tmp_path / "runs", engine="inline")
        assert "\n" not in str(err.value)
        monkeypatch.setenv("OPENAI_API_KEY", "none")
    for trial in (tmp_path / "runs").rglob("trial.json"):
        assert json.loads(trial.read_text())["status"] == "infra_error"


def test_the_endpoint_policy_needs_the_base_url(tmp_path, mini_task, agent_cli, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    config = AgentConfig(name="x", agent="cli", model=MODEL_NAME, network="endpoint",
                         options={"preset": "codex", "prefix": str(agent_cli("codex"))})
    with pytest.raises(AgentStartError, match="network policy endpoint needs the model's URL: -o base_url=URL"):
        run_trial(mini_task, config, tmp_path / "runs", engine="inline")
    trial = next((tmp_path / "runs").rglob("trial.json"))
    assert json.loads(trial.read_text())["status"] == "infra_error"
