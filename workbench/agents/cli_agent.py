"""The ``cli`` agent: a command-line coding agent (Claude Code, Codex, or any command) in the sandbox.

The command runs once in the session workspace with the instruction at /home/task/instruction.md, the
working copy as its directory, and the network policy of the configuration (default ``host``: these
agents call their model API themselves; the replay never has network). Credentials are passed only by
name (``options.env``). Usage is parsed from the CLI's own report where it prints one (Claude Code's
``--output-format json`` result, Codex's ``--json`` events). The wall clock is enforced by the sandbox;
turn limits are passed to CLIs that accept them; a reported cost above the budget is recorded as
``budget_exhausted`` with the submission kept (a CLI cannot be stopped at a dollar amount mid-run).

Against a model server of one's own (``-o base_url=URL``): Codex gets a provider in the sandbox home's
``.codex/config.toml`` (the Responses API), mini-swe-agent litellm's ``api_base``; with network policy
``endpoint`` the sandbox reaches only that URL (:mod:`workbench.sandbox.endpoint`). ``-o prefix=DIR``: a CLI
installed outside /usr (``.ci/agent-clis``), bound read-only with ``DIR/bin`` first on PATH. The CLI's own log
(Codex's events, mini-swe-agent's trajectory file) becomes the trajectory's steps (:mod:`.cli_logs`).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import shutil
from pathlib import Path

from ..errors import lookup
from ..sandbox.base import SANDBOX_HOME
from ..task import Task
from . import cli_logs
from .base import REFUSAL, AgentResult, AgentStartError, BaseAgent, Budget, Trajectory, Usage
from .public_task import PublicTask
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
    "mini-swe-agent": {
        "command": 'mini -y --exit-immediately -c {config_file} -c agent.cost_limit=0{turns_flag}{config_flags}'
                   '{model_flag} -t "$(cat {instruction})" -o "$HOME/mini-trajectory.json"',
        "model_flag": " -m {model}", "turns_flag": " -c agent.step_limit={max_turns}",
        "env": ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY"],
        # its version from the package metadata, by the interpreter beside ``mini`` (running ``mini`` on the
        # host would write its config into the host user's home)
        "program": "mini", "version": ["{bindir}/python", "-c", "import importlib.metadata as m; "
                                       "print('mini-swe-agent', m.version('mini-swe-agent'))"],
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
    options_known = frozenset({"preset", "command", "env", "prefix", "base_url", "config", "config_file",
                               "system_prompt"})

    @classmethod
    def check_config(cls, model, options) -> None:
        super().check_config(model, options)
        preset = options.get("preset")
        if preset is not None:
            lookup(PRESETS, "cli preset", preset, ValueError)
        if not options.get("command") and preset is None:
            raise ValueError("the cli agent needs -o preset=NAME (claude-code, codex, mini-swe-agent) "
                             "or -o command=...")
        if preset == "mini-swe-agent" and not model:
            raise ValueError("the mini-swe-agent preset needs a model (litellm's name, e.g. openai/gpt-4o-mini)")
        if not isinstance(options.get("config", {}), dict):
            raise ValueError("cli option config is a table of the CLI's own settings (key = value)")

    @classmethod
    def check_environment(cls, model, options) -> None:
        preset = options.get("preset")
        if not preset or options.get("command"):
            return
        spec = PRESETS[preset]
        names = list(options.get("env", spec["env"]))
        if "env" not in options and names and not any(k in os.environ for k in names):
            raise AgentStartError(f"the {preset} preset needs credentials: set one of {', '.join(names)}")
        program = spec.get("program", spec["version"][0])
        if program_path(program, options.get("prefix")) is None:
            where = f"in {options['prefix']}/bin" if options.get("prefix") else "on PATH"
            raise AgentStartError(f"the {preset} preset's program {program!r} is not installed ({where}; "
                                  "bash .ci/agent-clis installs codex and mini-swe-agent)")

    def command(self, budget: Budget) -> tuple[str, list[str], list[str] | None]:
        preset = PRESETS.get(self.options.get("preset", ""), {})
        template = self.options.get("command") or preset.get("command")
        if not template:
            raise ValueError("the cli agent needs options.command or options.preset (claude-code, codex)")
        name = self.options.get("preset", "")
        model = self.model or ""
        if name == "mini-swe-agent" and self.options.get("base_url") and "/" not in model:
            model = f"openai/{model}"  # litellm's provider for an OpenAI-compatible server
        config = self.options.get("config", {}) if name == "mini-swe-agent" else {}
        if name == "mini-swe-agent" and self.options.get("base_url"):
            config = {"model.model_kwargs.api_base": self.options["base_url"], **config}
        fields = {"instruction": INSTRUCTION, "model": shlex.quote(model), "seconds": int(budget.wall_sec),
                  "max_turns": budget.max_turns or "", "config_file": shlex.quote(self.options.get("config_file",
                                                                                                     "mini.yaml")),
                  "config_flags": "".join(f" -c {shlex.quote(f'{k}={_scalar(v)}')}" for k, v in config.items())}
        fields["model_flag"] = fill(preset.get("model_flag", ""), fields) if self.model else ""
        fields["turns_flag"] = fill(preset.get("turns_flag", ""), fields) if budget.max_turns else ""
        env = list(self.options.get("env", preset.get("env", [])))
        version = preset.get("version")
        if version:
            found = program_path(preset.get("program", version[0]), self.options.get("prefix"))
            bindir = str(found.parent) if found else ""
            version = [str(found) if found and version[0] == found.name else version[0].replace("{bindir}", bindir),
                       *version[1:]]
        return wrap(name, fill(template, fields), self.options), env, version

    def run(self, view: PublicTask, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        try:
            command, env_names, version_cmd = self.command(budget)
        except (ValueError, KeyError) as exc:
            raise AgentStartError(f"bad cli configuration: {exc}") from None
        self.check_environment(self.model, self.options)
        workspace.extra_env.update({k: os.environ[k] for k in env_names if k in os.environ})
        if self.options.get("prefix"):
            workspace.add_prefix(Path(self.options["prefix"]))
        if workspace.network == "endpoint":
            if not self.options.get("base_url"):
                raise AgentStartError("network policy endpoint needs the model's URL: -o base_url=URL")
            workspace.set_endpoint(self.options["base_url"])
        version = version_of(version_cmd) if version_cmd else None
        version = version.splitlines()[0][:200] if version else None
        trajectory.record("system", f"$ {command}", cli_version=version, env_passed=sorted(
            k for k in env_names if k in os.environ), network=workspace.network)
        res = workspace.run(command, budget.remaining())
        usage, final, steps = read_log(self.options.get("preset", ""), res.stdout)
        for step in steps:
            trajectory.record("assistant", step.get("message", ""), tool_calls=step.get("tool_calls"),
                              observations=step.get("observations"), usage=step.get("usage"))
        trajectory.record("assistant", final if not steps else "the CLI ended",
                          observations=[{"tool_call_id": "cli", "content": res.output}],
                          usage=None if steps else {"prompt_tokens": usage.prompt_tokens,
                                                    "completion_tokens": usage.completion_tokens},
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


def read_log(preset: str, stdout: str) -> tuple[Usage, str, list[dict]]:
    """Usage, final text and steps from the CLI's own log (steps empty when it gives none)."""
    if preset == "mini-swe-agent":
        traj = cli_logs.mini_trajectory(stdout)
        if traj is None:
            return Usage(), "", []
        steps, usage, status = cli_logs.mini_steps(traj)
        return usage, f"mini-swe-agent exit status: {status}", steps
    usage, final = parse_usage(stdout)
    if preset == "codex":
        steps, _ = cli_logs.codex_steps(stdout)
        return usage, final, steps
    return usage, final, []


def program_path(program: str, prefix: str | None) -> Path | None:
    if prefix:
        p = Path(prefix) / "bin" / program
        return p if p.is_file() and os.access(p, os.X_OK) else None
    found = shutil.which(program)
    return Path(found) if found else None


def _scalar(value) -> str:
    return json.dumps(value) if not isinstance(value, str) else value


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else json.dumps(str(value))


def codex_config(options: dict, home: str) -> str:
    """``$HOME/.codex/config.toml`` for a model server of one's own: a provider speaking the Responses API,
    keyed by the first credential name passed (llama-server accepts any key)."""
    env_key = (options.get("env") or ["OPENAI_API_KEY"])[0]
    top = dict(options.get("config", {}))
    if options.get("system_prompt"):
        top.setdefault("model_instructions_file", f"{home}/.codex/instructions.md")
    lines = ['model_provider = "local"', *(f"{k} = {_toml(v)}" for k, v in top.items()),
             "[model_providers.local]", 'name = "local"', f"base_url = {_toml(options['base_url'])}",
             f"env_key = {_toml(env_key)}", 'wire_api = "responses"']
    return "\n".join(lines) + "\n"


def _write(path: str, text: str) -> str:
    """A shell line writing ``text`` to ``path``: a quoted here-document (legible in the trajectory), base64 if
    the text could end it early."""
    if "WORKBENCH_EOF" not in text:
        return f"cat > \"{path}\" <<'WORKBENCH_EOF'\n{text.rstrip(chr(10))}\nWORKBENCH_EOF"
    blob = base64.b64encode(text.encode()).decode()
    return f'printf %s {blob} | base64 -d > "{path}"'


def wrap(preset: str, command: str, options: dict) -> str:
    """The shell around a preset's command: its configuration written into the sandbox home first, its own
    log printed after it (the home is the call's /tmp, gone when the call ends)."""
    if preset == "codex" and (options.get("base_url") or options.get("config")):
        setup = ['mkdir -p "$HOME/.codex"']
        if options.get("base_url"):
            setup.append(_write("$HOME/.codex/config.toml", codex_config(options, SANDBOX_HOME)))
        if options.get("system_prompt"):
            setup.append(_write("$HOME/.codex/instructions.md", str(options["system_prompt"])))
        return "\n".join([*setup, f"{command} </dev/null"])
    if preset == "mini-swe-agent":
        env = "export MSWEA_CONFIGURED=true LITELLM_LOCAL_MODEL_COST_MAP=True" + (
            " MSWEA_COST_TRACKING=ignore_errors" if options.get("base_url") else "")  # a local model has no price
        return (f"{env}; {command} </dev/null; rc=$?; printf '\\n%s\\n' '{cli_logs.MINI_MARKER}'; "
                'cat "$HOME/mini-trajectory.json" 2>/dev/null; exit $rc')
    return command


__all__ = ["CLIAgent", "PRESETS", "codex_config", "fill", "parse_usage", "read_log", "wrap"]
