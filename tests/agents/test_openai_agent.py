"""The openai agent against a local OpenAI-compatible server with scripted replies (real HTTP)."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import DEMO, write_task
from tests.fake_openai import ScriptedServer, error, reply
from workbench.batch.matrix import AgentConfig
from workbench.paths import RunPaths
from workbench.session.run import run_session
from workbench.task import load_task
from workbench.trial.pipeline import run_trial

GOOD = 'mkdir -p results\necho \'{"value": 42}\' > results/value.json\necho ok > results/log.txt\n'


def cfg(server, **kw) -> AgentConfig:
    options = {"base_url": server.url, **kw.pop("options", {})}
    return AgentConfig(name=kw.pop("name", "scripted"), agent="openai", model="scripted-1", options=options, **kw)


def _trajectory(trial) -> list[dict]:
    return [json.loads(x) for x in (trial / "session/trajectory.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_scripted_model_solves_the_demo_task_and_the_trial_scores_through_the_normal_replay(demo_task, tmp_path):
    files = {p.relative_to(DEMO / "solution").as_posix(): p.read_text()
             for p in (DEMO / "solution").rglob("*") if p.is_file()}
    script = [reply("Let me look at the task.", [("bash", {"command": "cat /home/task/instruction.md | head -5; ls"}),
                                                 ("read_file", {"path": "/home/task/paper/paper.md"})]),
              reply("Writing the workflow.", [("write_file", {"path": k, "content": v}) for k, v in files.items()]),
              reply("Checking the environment.",
                    [("bash", {"command": "python3 -c 'import pyscf; print(pyscf.__version__)'"})]),
              reply("", [("time_left", {}), ("finish", {"summary": "reproduce.sh computes the cc-pVXZ curves"})])]
    with ScriptedServer(script) as server:
        rec = run_trial(demo_task, cfg(server), tmp_path, engine="inline")
    tp = RunPaths(tmp_path).trial(rec.id)
    assert rec.outcome["agent_status"] == "completed" and rec.outcome["delivery"] == "delivered"
    assert rec.outcome["R"] > 0.9 and rec.outcome["full"]
    traj = _trajectory(tp.root)
    obs = [o["content"] for r in traj for o in r.get("observations", [])]
    assert any("2.14.0" in o for o in obs)  # the bash tool really ran in the task environment
    assert any("Kolos" in o for o in obs)  # the paper is readable
    usage = json.loads(tp.usage.read_text())
    assert usage["turns"] == 4 and usage["input_tokens"] == 400 and usage["output_tokens"] == 80
    assert json.loads(tp.delivery.read_text())["network"] == "none"


@pytest.mark.slow
def test_refusal_is_recorded_and_the_fallback_configuration_is_scored(tmp_path):
    task = load_task(write_task(tmp_path / "task"))
    with ScriptedServer([reply("I'm sorry, but I can't help with reproducing this experiment.")]) as server:
        shy = cfg(server, name="shy", fallback="oracle")
        rec = run_trial(task, shy, tmp_path / "runs", engine="inline",
                        fallbacks={"oracle": AgentConfig(name="oracle", agent="oracle")})
    assert rec.outcome["refused"] and rec.outcome["fallback_used"] == "oracle"
    assert rec.outcome["R"] == pytest.approx(0.75)
    refused = RunPaths(tmp_path / "runs").trial(rec.id).root / "session.refused"
    delivery = json.loads((refused / "delivery.json").read_text())
    assert delivery["agent_status"] == "refused" and "can't help" in delivery["message"]


@pytest.mark.slow
def test_429_with_retry_after_is_honoured_and_recorded(mini_task, tmp_path):
    script = [error(429, retry_after="1"), reply("", [("write_file", {"path": "reproduce.sh", "content": GOOD})]),
              reply("", [("finish", {"summary": "done"})])]
    with ScriptedServer(script) as server:
        d = run_session(mini_task, cfg(server), tmp_path / "t")
        gap = server.times[1] - server.times[0]
    assert d.agent_status == "completed" and d.status == "delivered"
    assert gap >= 0.95  # waited as the server asked
    first = [r for r in _trajectory(tmp_path / "t") if r["role"] == "assistant"][0]
    assert first["retries"] == [{"attempt": 1, "error": "RateLimitError", "status": 429, "delay_sec": 1.0}]


def test_an_endpoint_that_keeps_failing_is_an_infrastructure_error(mini_task, tmp_path):
    from workbench.agents.llm import ModelEndpointError

    with ScriptedServer([error(503, retry_after="0")] * 3) as server:
        with pytest.raises(ModelEndpointError, match="failed 3 times; last: InternalServerError"):
            run_session(mini_task, cfg(server, options={"max_attempts": 3}), tmp_path / "t")
        assert len(server.requests) == 3


@pytest.mark.slow
def test_a_4xx_on_the_first_call_is_a_misconfiguration_not_the_agents_zero(mini_task, tmp_path):
    from workbench.agents.llm import ModelEndpointError

    with ScriptedServer([error(400)]) as server:
        with pytest.raises(ModelEndpointError, match="refused the first request"):
            run_session(mini_task, cfg(server), tmp_path / "t")
    # after the agent has worked, the same rejection (e.g. a context grown too long) is the agent's own
    script = [reply("", [("write_file", {"path": "reproduce.sh", "content": GOOD})]), error(400)]
    with ScriptedServer(script) as server:
        d = run_session(mini_task, cfg(server), tmp_path / "t2")
    assert d.agent_status == "agent_error" and d.status == "delivered"


def test_malformed_and_unknown_tool_calls_are_answered_not_fatal(mini_task, tmp_path):
    script = [reply("", [("write_file", '{"path": "reproduce.sh", "content": '), ("teleport", {"to": "mars"})]),
              reply("", [("write_file", {"path": "reproduce.sh"})]),
              reply("", [("finish", {})])]
    with ScriptedServer(script) as server:
        d = run_session(mini_task, cfg(server), tmp_path / "t")
        tool_msgs = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert d.agent_status == "completed"
    assert tool_msgs[0].startswith("error: malformed arguments for write_file")
    assert "unknown tool 'teleport'" in tool_msgs[1]
    obs = [o["content"] for r in _trajectory(tmp_path / "t") for o in r.get("observations", [])]
    assert "error: write_file needs argument 'content'" in obs


@pytest.mark.slow
def test_deadline_warning_then_hard_stop_keeps_the_submission(tmp_path):
    task = load_task(write_task(tmp_path / "task"))
    script = [reply("", [("write_file", {"path": "reproduce.sh", "content": GOOD}),
                         ("bash", {"command": "sleep 2.5"})]),
              reply("", [("bash", {"command": "sleep 2"})]),
              reply("", [("bash", {"command": "echo started > notes.txt; sleep 60"})])]
    with ScriptedServer(script) as server:
        t0 = time.monotonic()
        d = run_session(task, cfg(server, time_scale=6 / 3600), tmp_path / "t")  # 6 s budget
        took = time.monotonic() - t0
        warned = [m for m in server.requests[2]["messages"] if "Deadline warning" in str(m.get("content"))]
    assert d.agent_status == "timeout" and took < 15
    assert warned and "Finish your deliverables" in warned[0]["content"]
    assert d.status == "delivered"  # what was written before the deadline is kept
    assert (tmp_path / "t/session/submission/notes.txt").read_text() == "started\n"
    kinds = [r.get("kind") for r in _trajectory(tmp_path / "t")]
    assert "deadline_warning" in kinds


@pytest.mark.slow
def test_cost_budget_is_enforced_not_only_recorded(mini_task, tmp_path):
    prices = {"input_per_mtok": 10.0, "output_per_mtok": 30.0}  # 1000 in + 1000 out = $0.04 a turn
    with ScriptedServer([], default=reply("", [("bash", {"command": "true"})], usage=(1000, 1000))) as server:
        d = run_session(mini_task, cfg(server, prices=prices, max_cost_usd=0.1), tmp_path / "t")
        calls = len(server.requests)
    usage = json.loads((tmp_path / "t/session/usage.json").read_text())
    assert d.agent_status == "budget_exhausted" and "cost budget of $0.1" in d.message
    assert calls == 3 and usage["cost_usd"] == pytest.approx(0.12)
    steps = _trajectory(tmp_path / "t")
    assert [round(r["cost_usd"], 4) for r in steps if "cost_usd" in r] == [0.04, 0.04, 0.04]


@pytest.mark.slow
def test_turn_and_token_budgets(mini_task, tmp_path):
    with ScriptedServer([], default=reply("", [("bash", {"command": "true"})], usage=(500, 100))) as server:
        d = run_session(mini_task, cfg(server, max_turns=2), tmp_path / "a")
        assert d.agent_status == "budget_exhausted" and len(server.requests) == 2
    with ScriptedServer([], default=reply("", [("bash", {"command": "true"})], usage=(500, 100))) as server:
        d = run_session(mini_task, cfg(server, max_tokens=1000), tmp_path / "b")
        assert d.agent_status == "budget_exhausted" and len(server.requests) == 2  # 600, then 1200 >= 1000


@pytest.mark.slow
def test_the_session_cannot_read_private_task_files(mini_task, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    secret = mini_task.root / "tests" / "SECRET.txt"
    probe = f"cat {secret}; ls {mini_task.root}; ls /home/task; env | grep -c OPENAI"
    script = [reply("", [("bash", {"command": probe}),
                         ("read_file", {"path": str(secret)}),
                         ("read_file", {"path": "../../../" + str(secret)}),
                         ("bash", {"command": f"ln -s {mini_task.root}/solution sol; ls sol/; cat sol/reproduce.sh"}),
                         ("read_file", {"path": "sol/reproduce.sh"})]),
              reply("", [("finish", {})])]
    with ScriptedServer(script) as server:
        run_session(mini_task, cfg(server), tmp_path / "t")
        sent = json.dumps(server.requests)
    log = (tmp_path / "t/session/trajectory.jsonl").read_text()
    for text in (sent, log):
        assert "private-token-7f3a" not in text  # tests/SECRET.txt
        assert "echo fine" not in text  # only the private solution/reproduce.sh contains this
    obs = [o["content"] for r in _trajectory(tmp_path / "t") for o in r.get("observations", [])]
    # /home/task holds only the public files; no OPENAI_* credentials (0 matches); the private paths do not exist
    assert "instruction.md\npaper\n0\n" in obs[0] and obs[0].count("No such file") == 2
    assert all("No such file" in o for o in obs[1:5])


@pytest.mark.slow
def test_no_endpoint_is_said_before_any_work_starts(tmp_path, monkeypatch):
    """No silent default to the public API with a dummy key: the variables to set, in one line, no trial."""
    from tests.conftest import run_cli

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    task = write_task(tmp_path / "task")
    proc = run_cli("run", str(task), "--agent", "openai", "--model", "m", "--out", str(tmp_path / "run"))
    assert proc.returncode == 1 and "no model endpoint: set OPENAI_BASE_URL" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


def test_a_refused_connection_names_the_url_it_tried(mini_task, tmp_path):
    from tests.conftest import free_port
    from workbench.agents.llm import ModelEndpointError

    url = f"http://127.0.0.1:{free_port()}/v1"
    config = AgentConfig(name="o", agent="openai", model="m", options={"base_url": url, "max_attempts": 1})
    with pytest.raises(ModelEndpointError, match=f"model endpoint {url}/? failed 1 times; last: APIConnectionError"):
        run_session(mini_task, config, tmp_path / "t")
