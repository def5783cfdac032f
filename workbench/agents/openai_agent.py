"""The ``openai`` agent: a tool-calling loop on any OpenAI-compatible endpoint.

The loop runs on the host; every tool call runs in the session sandbox (see ``workspace``). Tools:
``bash`` (a shell command, output truncated), ``read_file``, ``write_file``, ``time_left`` and
``finish``. Budgets are enforced, not only recorded: the wall clock (a warning is injected before the
deadline, and the loop stops at it, keeping the submission as it is), turns, tokens and cost (prices per
model in the configuration). A reply that declines the task before any work is a refusal.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from ..sandbox.gpus import GpusBusy
from ..task import Task
from .base import REFUSAL, AgentResult, AgentStartError, BaseAgent, Budget, Trajectory, Usage
from .llm import (
    MAX_ATTEMPTS,
    AgentRequestError,
    Attempt,
    EndpointNotConfigured,
    ModelEndpointError,
    chat,
    echoed,
    make_client,
)
from .public_task import PublicTask, truncate
from .workspace import HOME, TASK_HOME, Workspace

DEFAULT_TOOL_TIMEOUT = 600.0

SYSTEM = """You are a research engineer reproducing a published scientific result.
Your working directory is {home}: the starter submission, which becomes your deliverable. The task
contract is {task}/instruction.md and the paper is under {task}/paper/ (read-only).
Deliver a package whose entry point `bash reproduce.sh` regenerates every required result from scratch:
it will be re-run in a clean sandbox with no network, and only what it regenerates counts.
Use the tools: `bash` runs a shell command in {home} (no network; /tmp is fresh for every call),
`read_file` and `write_file` work on files, `time_left` reports the remaining time, and `finish` ends
the session. You have {minutes:.0f} minutes in total. Ship code, not results: data files (JSON, CSV,
.txt, arrays, images) are removed before the replay unless the task contract names them."""

TOOLS = [
    {"type": "function", "function": {
        "name": "bash", "description": "Run a shell command in the working directory; returns exit code and output.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string"},
            "timeout_sec": {"type": "number", "description": "optional limit for this command"}},
            "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "read_file",
        "description": "Read a text file (relative to the working directory, or under /home/task).",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "write_file", "description": "Create or overwrite a file in the working directory.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                       "required": ["path", "content"]}}},
    {"type": "function", "function": {
        "name": "time_left", "description": "Seconds left in the session.",
        "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {
        "name": "finish", "description": "End the session; the working directory is the deliverable.",
        "parameters": {"type": "object", "properties": {"summary": {"type": "string"}}}}},
]


SUBMIT_TOOL = {"type": "function", "function": {
    "name": "submit_for_score",
    "description": "Replay your package as it is now in a clean sandbox and get its official score from the hidden "
                   "evaluator (the session clock stops while it runs). Returns R, phase scores and, for SOTA tasks, "
                   "g and its band per instance, plus your best attempt so far.",
    "parameters": {"type": "object", "properties": {"description": {"type": "string",
                                                                    "description": "what this attempt changes"}}}}}


GPU_TOOLS = [
    {"type": "function", "function": {
        "name": "acquire_gpu",
        "description": "Hold this task's GPU(s) until release_gpu: only then do your commands see them "
                       "(CUDA_VISIBLE_DEVICES is set for you). Other sessions may hold them; waits up to wait_sec.",
        "parameters": {"type": "object", "properties": {"wait_sec": {"type": "number"}}}}},
    {"type": "function", "function": {
        "name": "release_gpu", "description": "Give the GPU(s) back so that other sessions can use them.",
        "parameters": {"type": "object", "properties": {}}}},
]
GPU_WAIT_SEC = 60.0  # acquire_gpu's default wait, within the time left


def is_refusal(message) -> bool:
    """The model declined: a structured refusal, or a reply that opens by declining and calls no tool."""
    if getattr(message, "refusal", None):
        return True
    return not message.tool_calls and bool(REFUSAL.match((message.content or "").strip()))


_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class OpenAIAgent(BaseAgent):
    name = "openai"
    default_network = "none"  # tool calls need none: the model is called from the host
    leases_gpus = True  # acquire_gpu / release_gpu (a GPU task's GPUs are held only between them)
    options_known = frozenset({"base_url", "api_key_env", "tool_timeout_sec", "max_attempts", "request"})

    @classmethod
    def check_config(cls, model, options) -> None:
        super().check_config(model, options)
        if not model:
            raise ValueError("the openai agent needs a model (--model, or model = ... in the matrix)")

    @classmethod
    def check_environment(cls, model, options) -> None:
        cls._client(options)

    @staticmethod
    def _client(options):
        """The endpoint's client; the key from the environment variable ``api_key_env`` names (never an
        option: options are recorded), else OPENAI_API_KEY."""
        name = options.get("api_key_env")
        if name and not _VARIABLE.match(str(name)):  # a key pasted here would be echoed: say what it is not
            raise AgentStartError("api_key_env must name an environment variable (letters, digits, _), not hold a key")
        if name and name not in os.environ:
            raise AgentStartError(f"api_key_env names {name}, which is not set in the environment")
        try:
            return make_client(options.get("base_url"), os.environ.get(name) if name else None)
        except EndpointNotConfigured as exc:
            raise AgentStartError(str(exc)) from None

    def run(self, view: PublicTask, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        if not self.model:
            raise AgentRequestError("the openai agent needs a model (--model or model = ... in the matrix)")
        client = self._client(self.options)
        usage = Usage()
        tool_timeout = float(self.options.get("tool_timeout_sec", DEFAULT_TOOL_TIMEOUT))
        tools = [*TOOLS, *([SUBMIT_TOOL] if workspace.scoring else []), *(GPU_TOOLS if view.gpus else [])]
        system = SYSTEM.format(home=HOME, task=TASK_HOME, minutes=budget.wall_sec / 60)
        if workspace.scoring:
            system += ("\n`submit_for_score` replays your package and returns its official score from a hidden "
                       "evaluator you cannot read; use it to compare attempts.")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": view.instruction},
        ]
        trajectory.record("system", messages[0]["content"])
        trajectory.record("user", view.instruction)
        warned = False
        worked = False
        idle = 0
        while True:
            left = budget.remaining()
            if left <= 0:
                return AgentResult("timeout", f"the {budget.wall_sec:.0f} s budget ran out", usage)
            exhausted = usage.over(budget)
            if exhausted:
                return AgentResult("budget_exhausted", exhausted, usage)
            for text in workspace.new_messages():  # a person's message reaches the agent on its next turn
                note = f"Message from the person overseeing this session: {text}"
                messages.append({"role": "user", "content": note})
                trajectory.record("user", note, kind="human_message")
            if not warned and left <= budget.warn_at():
                warned = True
                note = (f"Deadline warning: about {left / 60:.1f} minutes remain. Finish your deliverables now: "
                        "make sure reproduce.sh regenerates every required result, then call finish.")
                messages.append({"role": "user", "content": note})
                trajectory.record("user", note, kind="deadline_warning")
            retries: list[Attempt] = []
            try:
                resp = chat(client, remaining=budget.remaining, on_retry=retries.append, model=self.model,
                            messages=messages, tools=tools,
                            max_attempts=int(self.options.get("max_attempts", MAX_ATTEMPTS)),
                            **self.options.get("request", {}))
            except TimeoutError as exc:
                return AgentResult("timeout", str(exc), usage)
            except AgentRequestError as exc:
                if usage.turns == 0:  # the very first request refused: the endpoint or its configuration
                    raise ModelEndpointError(f"the model endpoint refused the first request (a misconfigured "
                                             f"endpoint, model or request options, not the agent): {exc}") from None
                return AgentResult("agent_error", str(exc), usage)
            usage.turns += 1
            msg = resp.choices[0].message
            pt = getattr(resp.usage, "prompt_tokens", 0) or 0
            ct = getattr(resp.usage, "completion_tokens", 0) or 0
            cost = budget.cost(pt, ct)
            usage.add(pt, ct, cost)
            calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                     for c in msg.tool_calls or []]
            if not worked and is_refusal(msg):
                trajectory.record("assistant", msg.content or msg.refusal or "", usage={"prompt_tokens": pt,
                                  "completion_tokens": ct}, cost_usd=cost, retries=[r.__dict__ for r in retries])
                return AgentResult("refused", (msg.content or msg.refusal or "").strip(), usage)
            messages.append({"role": "assistant", "content": msg.content or "",
                             **({"tool_calls": [{"id": c["id"], "type": "function", "function": {
                                 "name": c["name"], "arguments": echoed(c["arguments"])}} for c in calls]}
                                if calls else {})})
            observations, finished = [], None
            for c in calls:
                content, done = self._tool(c, workspace, budget, tool_timeout)
                worked = True
                observations.append({"tool_call_id": c["id"], "content": content})
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": content})
                if done is not None:
                    finished = done
            trajectory.record("assistant", msg.content or "", tool_calls=calls, observations=observations,
                              usage={"prompt_tokens": pt, "completion_tokens": ct}, cost_usd=cost,
                              **({"retries": [r.__dict__ for r in retries]} if retries else {}))
            if finished is not None:
                return AgentResult("completed", finished, usage)
            if not calls:
                idle += 1
                if idle >= 2:
                    return AgentResult("completed", "stopped calling tools", usage)
                nudge = "Use the tools to work on the task, and call finish when the deliverable is complete."
                messages.append({"role": "user", "content": nudge})
                trajectory.record("user", nudge, kind="nudge")
            else:
                idle = 0

    def _tool(self, call: dict, ws: Workspace, budget: Budget, tool_timeout: float) -> tuple[str, str | None]:
        """(observation, finish summary or None). Malformed calls are answered, never fatal."""
        try:
            args = json.loads(call["arguments"] or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except (json.JSONDecodeError, ValueError) as exc:
            return (f"error: malformed arguments for {call['name']}: {exc}; you sent: "
                    f"{truncate(call['arguments'] or '', 500)}"), None
        left = budget.remaining()
        try:
            if call["name"] == "bash":
                asked = float(args.get("timeout_sec") or tool_timeout)  # a model's number: nan, -1, 1e15
                limit = min(asked if math.isfinite(asked) and asked > 0 else tool_timeout, tool_timeout, left)
                res = ws.run(str(args["command"]), limit)
                tail = " (timed out)" if res.timed_out else ""
                return f"exit code {res.exit_code}{tail}\n{res.output}", None
            if call["name"] == "read_file":
                res = ws.read_file(str(args["path"]), min(60.0, left))
                return (res.output if res.exit_code == 0 else f"error: {res.output.strip()}"), None
            if call["name"] == "write_file":
                res = ws.write_file(str(args["path"]), str(args["content"]), min(60.0, left))
                return (res.output.strip() if res.exit_code == 0 else f"error: {res.output.strip()}"), None
            if call["name"] == "time_left":
                return json.dumps({"seconds_left": round(left, 1)}), None
            if call["name"] == "finish":
                return "session finished", str(args.get("summary", ""))
            if call["name"] == "acquire_gpu" and ws.gpus.n:
                try:
                    asked = float(args.get("wait_sec", GPU_WAIT_SEC))  # NaN would wait past the deadline
                    held = ws.acquire_gpus(min(asked if math.isfinite(asked) else GPU_WAIT_SEC, left))
                except GpusBusy as exc:
                    return f"error: {exc}", None
                return json.dumps({"gpus": [g.target for g in held.gpus], **held.env()}), None
            if call["name"] == "release_gpu" and ws.gpus.n:
                return ("released" if ws.release_gpus() else "no GPU was held"), None
            if call["name"] == "submit_for_score" and ws.scoring:
                from .scoring_client import submit

                return json.dumps(submit(*ws.scoring, str(args.get("description", "")))), None
        except KeyError as exc:
            return f"error: {call['name']} needs argument {exc}", None
        except (TypeError, ValueError) as exc:  # e.g. "timeout_sec": "soon"
            return f"error: bad argument for {call['name']}: {exc}", None
        return f"error: unknown tool {call['name']!r}; tools are bash, read_file, write_file, time_left, finish", None


__all__ = ["OpenAIAgent", "is_refusal", "truncate"]
