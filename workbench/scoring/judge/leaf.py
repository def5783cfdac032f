"""The LLM judge for interpretive leaves: frozen evidence in, validated JSON verdict out.

Per leaf the judge gets the requirement, its phase question, private context written by the task
authors (the leaf's ``judge_notes``, ``tests/judge.md``, ``tests/refs/*.json``) and the leaf's
``evidence_inputs`` read from ``evidence/`` within stated size limits, and may look further with
read-only evidence tools in a bounded loop. Evidence is data: every excerpt and tool result is wrapped
in a block labelled untrusted, and the score comes only from the judge's own JSON reply, never from
anything the evidence claims. Endpoint failures after bounded retries, and replies that stay invalid
after bounded re-asks, withhold the leaf; they are never a scientific zero.

Each judged leaf is keyed by a fingerprint of (leaf, prompt template, private context, evidence
hashes, model, settings); the verdict and the full transcript are stored as a :class:`JudgeRecord` in
``TRIAL/judge/<key>.json``, so re-scoring an unchanged trial makes no model calls and an expert can
audit what the judge saw. The prompts and the verdict are in :mod:`.judge_prompt`, the evidence blocks
and tools in :mod:`.judge_evidence`, the settings in :mod:`.judge_settings`.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import WorkbenchError, load_json_model
from ...evidence import Evidence
from ...io import atomic_write_json, sha256_bytes, sha256_file, tree_hashes
from ...paths import TrialPaths
from ...rubric.tree import Leaf
from ...task import Task
from .evidence import TOOLS, gather_evidence, run_tool
from .prompt import TEMPLATE_VERSION, Verdict, first_messages, parse_reply, private_context, verdict_format
from .settings import JudgeSettings

log = logging.getLogger(__name__)


class JudgeUsage(BaseModel):
    """What judging one leaf cost (records before a field was kept take its default)."""

    model_config = ConfigDict(extra="forbid")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    calls: int = 0
    invalid_replies: int = 0
    response_format: str = "free"  # "json_schema", "free", or "free (json_schema rejected)"


class JudgeRecord(BaseModel):
    """TRIAL/judge/<key>.json: one judged leaf, what the judge was shown and asked, and what it answered."""

    model_config = ConfigDict(extra="forbid")
    leaf: str
    key: str
    fingerprint: dict[str, str]
    model: str
    verdict: Verdict | None = None
    error: str | None = None
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    evidence: dict[str, str] = Field(default_factory=dict, description="evidence path -> sha256, as shown")
    missing: list[str] = Field(default_factory=list, description="evidence inputs the workbench found missing")
    transcript: list[dict[str, Any]] = Field(default_factory=list, description="the messages, image data omitted")


def read_judge_record(path: Path) -> JudgeRecord:
    """One judge record; a malformed one is a ValidationProblem naming the file and the field."""
    return load_json_model(path, JudgeRecord)


@dataclass
class JudgeOutcome:
    verdict: Verdict | None
    error: str | None
    key: str
    parts: dict[str, str]
    cached: bool
    usage: dict[str, Any] = field(default_factory=dict)
    transcript: str | None = None  # the record's path in the trial directory
    calls: int = 0


def context_sources(task: Task) -> dict[str, str]:
    """{path: sha256} of every private file the judge's context is drawn from, in full (the prompt shows
    excerpts; the fingerprint must see every byte): tests/judge.md and everything under tests/refs/."""
    paths, out = task.paths, {}
    if paths.judge_md.is_file():
        out[paths.judge_md.relative_to(paths.root).as_posix()] = sha256_file(paths.judge_md)
    if paths.refs.is_dir():
        refs = paths.refs.relative_to(paths.root).as_posix()
        out.update({f"{refs}/{k}": v for k, v in tree_hashes(paths.refs).items()})
    return out


def fingerprint_parts(task: Task, leaf: Leaf, context: str, hashes: dict[str, str], settings: JudgeSettings
                      ) -> dict[str, str]:
    """Every input of a judgement: the whole leaf definition (requirement, judge notes, tolerance, facts,
    scale, inputs), the prompt template, the private context and the files it comes from, the evidence,
    the model and its settings. A change to any of them is a new key, so the leaf is judged again."""
    leaf_def = json.dumps({"phase": leaf.phase, "node": leaf.node.model_dump(exclude={"sub_tasks"}, mode="json")},
                          sort_keys=True, default=str)
    sources = json.dumps(context_sources(task), sort_keys=True)
    return {"leaf": sha256_bytes(leaf_def.encode())[:16], "template": TEMPLATE_VERSION,
            "context": sha256_bytes((context + "\x00" + sources).encode())[:16],
            "evidence": sha256_bytes(json.dumps(hashes, sort_keys=True).encode())[:16],
            "model": settings.model, "settings": settings.fingerprint()[:16]}


def _transcript(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as sent, with image data replaced by a note (the image's hash is in its evidence block)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [c if c.get("type") != "image_url" else {"type": "image_url", "image_url": "(image data omitted)"}
                       for c in content]  # the image's path and hash are in the evidence block around it
        out.append({**m, "content": content})
    return out


def _tool_round(msg, ev: Evidence, reader, limit: int) -> list[dict[str, Any]]:
    """The assistant's tool calls and the tools' answers, as messages. The tools parse evidence: in the
    confined reader, all of one round's calls in one sandbox."""
    from ...agents.llm import echoed

    messages: list[dict[str, Any]] = [{"role": "assistant", "content": msg.content or "", "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.function.name,
                                                     "arguments": echoed(c.function.arguments)}}
        for c in msg.tool_calls]}]
    answers: dict[str, str] = {}
    calls: list[tuple[str, tuple[str, dict]]] = []
    for c in msg.tool_calls:
        try:
            args = json.loads(c.function.arguments or "{}")
        except json.JSONDecodeError as exc:
            answers[c.id] = f"error: malformed arguments: {exc}"
        else:
            calls.append((c.id, (c.function.name, args if isinstance(args, dict) else {})))
    results = (reader.tools([call for _, call in calls], limit) if reader is not None
               else [run_tool(ev, n, a, limit) for n, a in (x for _, x in calls)])
    answers.update({cid: text for (cid, _), text in zip(calls, results, strict=True)})
    return messages + [{"role": "tool", "tool_call_id": c.id, "content": answers[c.id]} for c in msg.tool_calls]


def _cached(path: Path, key: str, parts: dict[str, str], transcript: str) -> JudgeOutcome | None:
    """The stored verdict of this very judgement; a record without one, or unreadable, is judged again."""
    if not path.is_file():
        return None
    try:
        record = read_judge_record(path)
    except WorkbenchError as exc:
        log.warning("%s; judging the leaf again", str(exc).splitlines()[0])
        return None
    if record.verdict is None:
        return None
    return JudgeOutcome(record.verdict, None, key, parts, True, record.usage.model_dump(), transcript)


def judge_leaf(task: Task, leaf: Leaf, ev: Evidence, settings: JudgeSettings, trial: TrialPaths, client=None,
               *, force: bool = False, reader=None) -> JudgeOutcome:
    """Judge one leaf, its record in ``trial``'s judge/. ``reader`` (a :class:`workbench.reader.client.Reader`)
    answers the judge's tool calls in the confined reader; without one they run here (tests of the judge's
    logic only)."""
    from ...agents.llm import AgentRequestError, ModelEndpointError, chat, make_client

    content, hashes, missing = gather_evidence(ev, leaf, settings)
    context = private_context(task, leaf)
    parts = fingerprint_parts(task, leaf, context, hashes, settings)
    key = sha256_bytes(json.dumps(parts, sort_keys=True).encode())[:24]
    path = trial.judge_record(key)
    transcript = path.relative_to(trial.root).as_posix()
    cached = None if force else _cached(path, key, parts, transcript)
    if cached is not None:
        return cached
    messages = first_messages(leaf, context, content, settings.excerpt_bytes)
    client = client or make_client(settings.base_url, settings.api_key, timeout=settings.call_timeout_sec)
    deadline = time.monotonic() + settings.leaf_timeout_sec
    usage = JudgeUsage(response_format="json_schema" if settings.json_schema else "free")
    request = {"model": settings.model, "temperature": settings.temperature, "tools": TOOLS}
    if settings.seed is not None:
        request["seed"] = settings.seed
    if settings.max_tokens:
        request["max_tokens"] = settings.max_tokens
    if settings.json_schema:
        request["response_format"] = verdict_format(leaf.node.scale, len(leaf.node.facts or []))
    rounds = 0
    verdict, error = None, None
    try:
        while verdict is None:
            if rounds >= settings.max_tool_rounds:
                request["tool_choice"] = "none"
            try:
                resp = chat(client, remaining=lambda: deadline - time.monotonic(),
                            call_timeout=settings.call_timeout_sec, max_attempts=settings.max_attempts,
                            messages=messages, **request)
            except AgentRequestError:
                if usage.calls or "response_format" not in request:
                    raise
                request.pop("response_format")  # the endpoint does not offer it: free JSON, said in the usage
                usage.response_format = "free (json_schema rejected)"
                continue
            usage.calls += 1
            pt = getattr(resp.usage, "prompt_tokens", 0) or 0
            ct = getattr(resp.usage, "completion_tokens", 0) or 0
            usage.prompt_tokens += pt
            usage.completion_tokens += ct
            if settings.prices:
                usage.cost_usd = (usage.cost_usd or 0.0) + settings.prices.cost(pt, ct)
            msg = resp.choices[0].message
            if msg.tool_calls and request.get("tool_choice") != "none":
                rounds += 1
                messages += _tool_round(msg, ev, reader, settings.excerpt_bytes)
                continue
            reply = msg.content or ""
            messages.append({"role": "assistant", "content": reply})
            try:
                verdict = parse_reply(reply, leaf)
                if verdict.evidence_access == "missing" and not missing:
                    verdict = None
                    raise ValueError("you replied that the evidence is missing, but the workbench found every "
                                     "evidence input of this leaf in the frozen evidence (shown above; the tools "
                                     "read more). Judge it, or say \"partial\" if part of it is unreadable")
            except (ValueError, ValidationError) as exc:
                usage.invalid_replies += 1
                if usage.invalid_replies > settings.max_reask:
                    error = f"no valid verdict after {usage.invalid_replies} replies: {str(exc)[:300]}"
                    break
                messages.append({"role": "user", "content": f"Your reply was not a valid verdict ({str(exc)[:300]}). "
                                                            "Reply with the JSON object only."})
    except ModelEndpointError as exc:  # said as what it is: the judge could not be reached, not the evidence
        error = f"judge unreachable: {exc}"
    except (AgentRequestError, TimeoutError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    record = JudgeRecord(leaf=leaf.id, key=key, fingerprint=parts, model=settings.model, verdict=verdict, error=error,
                         usage=usage, evidence=hashes, missing=missing, transcript=_transcript(messages))
    atomic_write_json(path, record.model_dump())
    return JudgeOutcome(verdict, error, key, parts, False, usage.model_dump(), transcript, usage.calls)
