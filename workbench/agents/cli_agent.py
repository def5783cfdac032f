"""The ``cli`` agent: a command-line coding agent (Claude Code, Codex, or any command) in the sandbox.

The command runs once in the session workspace with the instruction at /home/task/instruction.md, the
working copy as its directory, and the network policy of the configuration (default ``host``: these
agents call their model API themselves; the replay never has network). Credentials are passed only by
name (``options.env``). Usage is parsed from the CLI's own report where it prints one (Claude Code's
``--output-format json`` result, Codex's ``--json`` events). The wall clock is enforced by the sandbox;
turn limits are passed to CLIs that accept them; a reported cost above the budget is recorded as
``budget_exhausted`` with the submission kept (a CLI cannot be stopped at a dollar amount mid-run).
"""

from __future__ import annotations

import json
import os
import re
import shutil

from ..task import Task
from .base import AgentResult, AgentStartError, BaseAgent, Budget, TaskView, Trajectory, Usage
from .openai_agent import REFUSAL
from .workspace import Workspace, version_of

INSTRUCTION = "/home/task/instruction.md"
PRESETS = {
    "claude-code": {
        "command": 'claude -p "$(cat {instruction})" --output-format json --dangerously-skip-permissions'
                   "{model_flag}{turns_flag}",
        "model_flag": " --model {model}", "turns_flag": " --max-turns {max_turns}",
        "env": ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"],
        "version": ["claude", "--version"],
    },
    "codex": {
        "command": 'codex exec --json --skip-git-repo-check --sandbox danger-full-access{model_flag} '
                   '"$(cat {instruction})"',
        "model_flag": " -m {model}", "turns_flag": "",
        "env": ["OPENAI_API_KEY", "OPENAI_BASE_URL"],
        "version": ["codex", "--version"],
    },
}


def fill(template: str, fields: dict) -> str:
    """Replace only the known {placeholders}: a command may contain JSON, awk or ${VAR} braces."""
    return re.sub(r"\{(" + "|".join(map(re.escape, fields)) + r")\}", lambda m: str(fields[m.group(1)]), template)


def parse_usage(stdout: str) -> tuple[Usage, str]:
    """Usage and final text from a CLI's JSON report(s); empty when it prints none."""
    usage, text, found = Usage(), "", False
    objects = []
    try:
        objects.append(json.loads(stdout))
    except json.JSONDecodeError:
        for line in stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    objects.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    for obj in objects:
        if not isinstance(obj, dict):
            continue
        if obj.get("type") == "result":  # Claude Code
            u = obj.get("usage") or {}
            usage.prompt_tokens += int(u.get("input_tokens", 0)) + int(u.get("cache_read_input_tokens", 0)) + \
                int(u.get("cache_creation_input_tokens", 0))
            usage.completion_tokens += int(u.get("output_tokens", 0))
            usage.turns += int(obj.get("num_turns", 0))
            if obj.get("total_cost_usd") is not None:
                usage.cost_usd = (usage.cost_usd or 0.0) + float(obj["total_cost_usd"])
            text = str(obj.get("result", ""))
            found = True
        elif obj.get("type") == "turn.completed":  # Codex
            u = obj.get("usage") or {}
            usage.prompt_tokens += int(u.get("input_tokens", 0))
            usage.completion_tokens += int(u.get("output_tokens", 0))
            usage.turns += 1
            found = True
        elif obj.get("type") == "item.completed" and (obj.get("item") or {}).get("type") == "agent_message":
            text = str(obj["item"].get("text", ""))
    return (usage if found else Usage()), text


NOT_STARTED = (126, 127)  # the shell's codes for a command it could not execute or find


class CLIAgent(BaseAgent):
    name = "cli"
    default_network = "host"
    options_known = frozenset({"preset", "command", "env"})

    @classmethod
    def check_config(cls, model, options) -> None:
        super().check_config(model, options)
        preset = options.get("preset")
        if preset is not None and preset not in PRESETS:
            raise ValueError(f"unknown cli preset {preset!r} (known: {', '.join(sorted(PRESETS))})")
        if not options.get("command") and preset is None:
            raise ValueError("the cli agent needs -o preset=NAME (claude-code, codex) or -o command=...")

    @classmethod
    def check_environment(cls, model, options) -> None:
        preset = options.get("preset")
        if not preset or options.get("command"):
            return
        spec = PRESETS[preset]
        names = list(options.get("env", spec["env"]))
        if "env" not in options and names and not any(k in os.environ for k in names):
            raise AgentStartError(f"the {preset} preset needs credentials: set one of {', '.join(names)}")
        program = spec["version"][0]
        if shutil.which(program) is None:
            raise AgentStartError(f"the {preset} preset's program {program!r} is not installed (not on PATH)")

    def command(self, budget: Budget) -> tuple[str, list[str], list[str] | None]:
        preset = PRESETS.get(self.options.get("preset", ""), {})
        template = self.options.get("command") or preset.get("command")
        if not template:
            raise ValueError("the cli agent needs options.command or options.preset (claude-code, codex)")
        fields = {"instruction": INSTRUCTION, "model": self.model or "", "seconds": int(budget.wall_sec),
                  "max_turns": budget.max_turns or ""}
        fields["model_flag"] = fill(preset.get("model_flag", ""), fields) if self.model else ""
        fields["turns_flag"] = fill(preset.get("turns_flag", ""), fields) if budget.max_turns else ""
        env = list(self.options.get("env", preset.get("env", [])))
        return fill(template, fields), env, preset.get("version")

    def run(self, view: TaskView, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        try:
            command, env_names, version_cmd = self.command(budget)
        except (ValueError, KeyError) as exc:
            raise AgentStartError(f"bad cli configuration: {exc}") from None
        self.check_environment(self.model, self.options)
        workspace.extra_env.update({k: os.environ[k] for k in env_names if k in os.environ})
        version = version_of(version_cmd) if version_cmd else None
        trajectory.record("system", f"$ {command}", cli_version=version, env_passed=sorted(
            k for k in env_names if k in os.environ), network=workspace.network)
        res = workspace.run(command, budget.remaining())
        usage, final = parse_usage(res.stdout)
        trajectory.record("assistant", final, observations=[{"tool_call_id": "cli", "content": res.output}],
                          usage={"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
                          cost_usd=usage.cost_usd, exit_code=res.exit_code)
        if res.timed_out:
            return AgentResult("timeout", f"the {budget.wall_sec:.0f} s budget ran out", usage)
        if final and REFUSAL.match(final.strip()) and usage.turns <= 1:
            return AgentResult("refused", final.strip(), usage)
        if res.exit_code in NOT_STARTED and not usage.turns:
            last = next((ln for ln in reversed(res.output.splitlines()) if ln.strip()), "")
            raise AgentStartError(f"the CLI could not start (exit {res.exit_code}): {last.strip()[:300]}")
        if res.exit_code != 0:
            return AgentResult("agent_error", f"the CLI exited with code {res.exit_code}", usage,
                               {"output_tail": res.output[-2000:]})
        exhausted = usage.over(budget)
        if exhausted:
            return AgentResult("budget_exhausted", f"{exhausted} (reported by the CLI after its run)", usage)
        return AgentResult("completed", final[:2000] or "the CLI finished", usage)


__all__ = ["CLIAgent", "PRESETS", "fill", "parse_usage"]
