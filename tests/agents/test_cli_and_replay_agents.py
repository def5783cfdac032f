"""The cli agent (a fake command-line agent inside the sandbox) and the replay agent (ATIF export:
tests/trajectory/test_trajectory.py)."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import run_cli, write_task
from workbench.agents.cli_agent import parse_usage
from workbench.batch.matrix import AgentConfig
from workbench.paths import RunPaths
from workbench.session.run import run_session
from workbench.task import load_task
from workbench.trial.pipeline import run_trial

FAKE_CLI = r"""#!/usr/bin/env bash
# stands in for `claude -p ... --output-format json`: works in the directory, reports usage as JSON
cat /home/task/instruction.md > /dev/null
printf 'mkdir -p results\necho %s > results/value.json\necho ok > results/log.txt\n' "'{\"value\": 42}'" > reproduce.sh
echo "key=${FAKE_KEY:-missing} openai=${OPENAI_API_KEY:-missing}" > seen.txt
python3 -c "import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=3).read().decode())" \
  "http://127.0.0.1:$1/ping" > net.txt 2>&1 || echo unreachable > net.txt
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":7,"result":"%RESULT%",'\
'"total_cost_usd":0.12,"usage":{"input_tokens":1200,"cache_read_input_tokens":300,"output_tokens":450}}'
"""


def _cli_task(tmp_path, result="Done: wrote reproduce.sh"):
    root = write_task(tmp_path / "task")
    (root / "environment/starter_submission/fake_cli.sh").write_text(FAKE_CLI.replace("%RESULT%", result))
    return load_task(root)


@pytest.mark.slow
def test_cli_agent_runs_in_the_sandbox_with_host_network_and_named_credentials(tmp_path, host_http, monkeypatch):
    ping_server, _ = host_http
    monkeypatch.setenv("FAKE_KEY", "k-123")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-this-agent")
    task = _cli_task(tmp_path)
    config = AgentConfig(name="fake-cli", agent="cli", options={"command": f"bash fake_cli.sh {ping_server}",
                                                                "env": ["FAKE_KEY"]})
    rec = run_trial(task, config, tmp_path / "runs", engine="inline")
    tp = RunPaths(tmp_path / "runs").trial(rec.id)
    delivery = json.loads(tp.delivery.read_text())
    assert delivery["agent_status"] == "completed" and delivery["network"] == "host"
    sub = tp.submission
    assert (sub / "seen.txt").read_text().strip() == "key=k-123 openai=missing"
    assert (sub / "net.txt").read_text().strip() == "served-by-host"  # host network, as configured
    usage = json.loads(tp.usage.read_text())
    assert (usage["turns"], usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (7, 1500, 450, 0.12)
    assert rec.outcome["R"] == pytest.approx(0.75)  # and the replay, with no network, scores what it delivered
    prov = json.loads(tp.provenance.read_text())
    assert prov["network"] == "none"


def test_cli_agent_network_can_be_cut(tmp_path, host_http):
    ping_server, _ = host_http
    task = _cli_task(tmp_path)
    config = AgentConfig(name="offline", agent="cli", network="none",
                         options={"command": f"bash fake_cli.sh {ping_server}"})
    d = run_session(task, config, tmp_path / "t")
    assert d.network == "none"
    assert (tmp_path / "t/session/submission/net.txt").read_text().strip() == "unreachable"


@pytest.mark.slow
def test_cli_agent_outcomes(tmp_path):
    task = _cli_task(tmp_path, result="I'm sorry, but I can't help with that.")
    base = {"command": "bash fake_cli.sh 1"}
    refused = run_session(task, AgentConfig(name="a", agent="cli", options=base), tmp_path / "a")
    assert refused.agent_status == "completed"  # num_turns 7: it worked, then apologised
    decline = {"command": """echo '{"type":"result","num_turns":1,"result":"I cannot help with that request."}'"""}
    declined = run_session(task, AgentConfig(name="a2", agent="cli", options=decline), tmp_path / "a2")
    assert declined.agent_status == "refused" and "cannot help" in declined.message
    task = _cli_task(tmp_path / "b", result="Done")
    over = run_session(task, AgentConfig(name="b", agent="cli", options=base, max_cost_usd=0.05), tmp_path / "b1")
    assert over.agent_status == "budget_exhausted" and "reported by the CLI" in over.message
    fails = run_session(task, AgentConfig(name="c", agent="cli", options={"command": "exit 3"}), tmp_path / "c")
    assert fails.agent_status == "agent_error" and "code 3" in fails.message
    slow = run_session(task, AgentConfig(name="d", agent="cli", options={"command": "sleep 30"},
                                         time_scale=2 / 3600), tmp_path / "d")
    assert slow.agent_status == "timeout"
    with pytest.raises(ValueError, match="needs -o preset=NAME"):
        AgentConfig(name="e", agent="cli")  # refused before any trial is recorded


def test_usage_parsers_for_claude_code_and_codex():
    claude = json.dumps({"type": "result", "num_turns": 3, "result": "ok", "total_cost_usd": 0.5,
                         "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 7}})
    u, text = parse_usage(claude)
    assert (u.turns, u.prompt_tokens, u.completion_tokens, u.cost_usd, text) == (3, 15, 7, 0.5, "ok")
    codex = "\n".join(json.dumps(e) for e in [
        {"type": "thread.started"}, {"type": "turn.completed", "usage": {"input_tokens": 100, "output_tokens": 20}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "all done"}},
        {"type": "turn.completed", "usage": {"input_tokens": 50, "output_tokens": 5}}])
    u, text = parse_usage("noise\n" + codex)
    assert (u.turns, u.prompt_tokens, u.completion_tokens, u.cost_usd, text) == (2, 150, 25, None, "all done")
    assert parse_usage("plain text output")[0].turns == 0


@pytest.mark.slow
def test_replay_agent_reapplies_a_submission_or_a_trajectory(tmp_path, mini_task):
    rec = run_trial(mini_task, AgentConfig(name="rs", agent="replay",
                                           options={"submission": str(mini_task.root / "solution")}),
                    tmp_path / "runs", engine="inline")
    assert rec.outcome["delivery"] == "delivered" and rec.outcome["R"] == pytest.approx(0.75)
    recorded = tmp_path / "recorded.jsonl"
    calls = [{"id": "c1", "name": "write_file", "arguments": json.dumps({"path": "reproduce.sh", "content":
             'mkdir -p results\necho \'{"value": 42}\' > results/value.json\n'})},
             {"id": "c2", "name": "bash", "arguments": json.dumps({"command": "bash reproduce.sh && ls results"})},
             {"id": "c3", "name": "time_left", "arguments": "{}"}]
    recorded.write_text(json.dumps({"turn": 1, "role": "assistant", "message": "m", "tool_calls": calls}) + "\n")
    d = run_session(mini_task, AgentConfig(name="rt", agent="replay", options={"trajectory": str(recorded)}),
                    tmp_path / "t")
    assert d.status == "delivered" and "replayed 2 tool calls" in d.message
    traj = [json.loads(x) for x in (tmp_path / "t/session/trajectory.jsonl").read_text().splitlines()]
    assert "value.json" in traj[0]["observations"][1]["content"]


def test_presets_expand_to_the_documented_commands():
    from workbench.agents.base import Budget
    from workbench.agents.cli_agent import CLIAgent

    claude = CLIAgent(model="claude-opus-5", options={"preset": "claude-code"})
    cmd, env, version = claude.command(Budget(wall_sec=3600, max_turns=200))
    assert cmd == ('claude -p "$(cat /home/task/instruction.md)" --output-format json '
                   "--dangerously-skip-permissions --model claude-opus-5 --max-turns 200")
    assert "ANTHROPIC_API_KEY" in env and version == ["claude", "--version"]
    codex, env, _ = CLIAgent(options={"preset": "codex"}).command(Budget(wall_sec=60))
    assert codex.startswith("codex exec --json") and " -m " not in codex and "OPENAI_API_KEY" in env
    raw, _, _ = CLIAgent(options={"command": "awk '{print $1}' {instruction} ${HOME}"}).command(Budget(wall_sec=1))
    assert raw == "awk '{print $1}' /home/task/instruction.md ${HOME}"


# --- an agent that cannot start is an infrastructure error, never a 0 (issue 18, item 1) ----------------

def _run_trial_cli(tmp_path, *args):
    task = write_task(tmp_path / "task")
    return run_cli("run", str(task), "--out", str(tmp_path / "run"), "--engine", "inline", *args), tmp_path / "run"


def _statuses(run):
    return {p.parent.name: json.loads(p.read_text())["status"] for p in (run / "trials").glob("*/trial.json")}


@pytest.mark.slow
@pytest.mark.parametrize(("args", "cause", "recorded"), [
    # known before any work starts: refused, nothing recorded
    (["--agent", "cli", "-o", "preset=claude-code", "-o", "env=[]"], "'claude' is not installed", []),
    # known only once the session runs: the trial is infra_error
    (["--agent", "cli", "-o", "command=no-such-agent-cli --go"], "could not start (exit 127)", ["infra_error"]),
    (["--agent", "replay", "-o", "submission=/nope"], "/nope is not a directory", ["infra_error"]),
])
def test_an_agent_that_cannot_start_is_an_infra_error_with_its_cause(tmp_path, monkeypatch, args, cause, recorded):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no claude here, whatever the developer's machine has
    proc, run = _run_trial_cli(tmp_path, *args)
    assert proc.returncode == 1 and cause in proc.stderr and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines()  # not the stage lines, nor a wait for a free core
              if not re.match(r"\d\d:\d\d:\d\d(  | WARNING workbench\.sandbox\.cpus)", line)]
    assert len(errors) == 1  # one line, beside the stage lines of a trial that started
    assert list(_statuses(run).values()) == recorded if run.exists() else recorded == []  # never "complete", R = 0
    assert not list(run.glob("trials/*/scores.json"))


@pytest.mark.parametrize(("args", "message"), [
    (["--agent", "cli", "-o", "preset=claude-cod"], "unknown cli preset 'claude-cod'"),
    (["--agent", "oracle", "-o", "modle=x"], "the oracle agent has no option 'modle'"),
    (["--agent", "openai"], "the openai agent needs a model"),
    (["--agent", "replay"], "needs -o submission=DIR"),
])
def test_a_misconfigured_agent_is_refused_before_any_trial_is_recorded(tmp_path, args, message):
    proc, run = _run_trial_cli(tmp_path, *args)
    assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr
    assert not (run / "trials").exists()


def test_credentials_missing_for_a_preset_is_said_before_it_runs(tmp_path, monkeypatch):
    for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(k, raising=False)
    proc, run = _run_trial_cli(tmp_path, "--agent", "cli", "-o", "preset=claude-code")
    assert proc.returncode == 1 and "set one of ANTHROPIC_API_KEY" in proc.stderr
    assert not run.exists()  # refused before any trial is recorded
