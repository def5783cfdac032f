"""A CLI agent's own log, read into trajectory steps and usage: Codex's ``--json`` events and mini-swe-agent's
trajectory file. The CLI's own counts are the usage (the workbench never sees its requests), and each command
it ran becomes a tool call with its output as the observation, so the export is the CLI's real run.

A step is ``{"message", "tool_calls", "observations", "usage"}`` as :meth:`Trajectory.record` takes them.
"""

from __future__ import annotations

import json

from .base import Usage

MINI_MARKER = "==workbench: mini-swe-agent trajectory=="  # printed by the preset before the trajectory file


def json_lines(stdout: str) -> list[dict]:
    objects = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                objects.append(obj)
    return objects


def codex_steps(stdout: str) -> tuple[list[dict], Usage]:
    """Codex ``exec --json``: one step per completed item (a message, a command and its output, an error);
    each turn's usage (``turn.completed``) on the turn's last step."""
    steps: list[dict] = []
    usage = Usage()
    turn_start = 0
    for obj in json_lines(stdout):
        kind = obj.get("type")
        if kind == "turn.started":
            turn_start = len(steps)
        elif kind == "item.completed":
            item = obj.get("item") or {}
            itype, iid = item.get("type"), str(item.get("id", len(steps)))
            if itype == "command_execution":
                steps.append({"message": "", "tool_calls": [{"id": iid, "name": "shell",
                                                             "arguments": {"command": item.get("command", "")}}],
                              "observations": [{"tool_call_id": iid, "content": item.get("aggregated_output", "")}]})
            elif itype in ("agent_message", "reasoning"):
                steps.append({"message": str(item.get("text", ""))})
            elif itype == "error":
                steps.append({"message": f"codex error: {item.get('message', '')}"})
            elif itype == "file_change":
                steps.append({"message": "file change: " + json.dumps(item.get("changes", []))[:2000]})
        elif kind in ("turn.completed", "turn.failed"):
            u = obj.get("usage") or {}
            if kind == "turn.failed":
                steps.append({"message": f"turn failed: {(obj.get('error') or {}).get('message', '')}"[:2000]})
            if u:
                usage.turns += 1
                p, c = int(u.get("input_tokens", 0)), int(u.get("output_tokens", 0))
                usage.add(p, c, None)
                if len(steps) == turn_start:
                    steps.append({"message": ""})
                steps[-1]["usage"] = {"prompt_tokens": p, "completion_tokens": c}
    return steps, usage


def mini_trajectory(stdout: str) -> dict | None:
    """mini-swe-agent's trajectory file, as the preset printed it after :data:`MINI_MARKER`."""
    _, sep, rest = stdout.partition(MINI_MARKER)
    if not sep:
        return None
    try:
        data = json.loads(rest)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def mini_steps(traj: dict) -> tuple[list[dict], Usage, str]:
    """mini-swe-agent's messages: each model call a step (its actions the tool calls, what follows up to the
    next call their observation, its response's usage the step's); and its exit status. A reply it rejected
    (a format error) is stored as the error message with the response in ``extra``: the reply is the step's
    message, the error its observation."""
    steps: list[dict] = []
    usage = Usage()
    messages = [m for m in traj.get("messages") or [] if isinstance(m, dict)]
    calls_at = [i for i, m in enumerate(messages) if m.get("role") == "assistant" or _response(m)]
    for n, i in enumerate(calls_at):
        m, extra, response = messages[i], messages[i].get("extra") or {}, _response(messages[i])
        rejected = m.get("role") != "assistant"
        actions = [] if rejected else [a for a in extra.get("actions") or [] if isinstance(a, dict)]
        calls = [{"id": f"mini-{i}-{j}", "name": "bash", "arguments": {"command": a.get("command", "")}}
                 for j, a in enumerate(actions)]
        stop = calls_at[n + 1] if n + 1 < len(calls_at) else len(messages)
        after = [_text(x.get("content")) for x in messages[i if rejected else i + 1:stop]]
        reply = _text(((response.get("choices") or [{}])[0].get("message") or {}).get("content")) if rejected else \
            _text(m.get("content"))
        step: dict = {"message": reply, "tool_calls": calls}
        if after:
            step["observations"] = [{"tool_call_id": calls[0]["id"] if calls else "mini", "content": "\n".join(after)}]
        u = response.get("usage") or {}
        p, c = int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)
        usage.turns += 1
        usage.add(p, c, float(extra["cost"]) if extra.get("cost") else None)
        step["usage"] = {"prompt_tokens": p, "completion_tokens": c}
        steps.append(step)
    return steps, usage, str((traj.get("info") or {}).get("exit_status", ""))


def _response(message: dict) -> dict:
    response = (message.get("extra") or {}).get("response")
    return response if isinstance(response, dict) else {}


def _text(content) -> str:
    if isinstance(content, list):  # a multimodal message: its text parts
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)
