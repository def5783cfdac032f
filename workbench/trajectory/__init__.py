"""Trajectories: the workbench's trajectory.jsonl and its export to Harbor's ATIF (v1.8).

trajectory.jsonl has one record per turn: ``turn, timestamp, role, message`` and, where they apply,
``tool_calls [{id, name, arguments}]``, ``observations [{tool_call_id, content}]`` (truncated with a
marker), ``usage {prompt_tokens, completion_tokens}``, ``cost_usd``, ``elapsed_sec``, ``retries``.

The export is checked by Harbor's own TrajectoryValidator (tests/interop). An observation names the tool
call it answers (``source_call_id``) only when that call is in the same step; output that answers no call
of ours (a CLI agent's whole run) carries no reference, as ATIF has it for actions without tool calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..paths import TrialPaths
from ..session.ledger import read_delivery, read_usage
from ..version import __version__

ATIF_VERSION = "ATIF-v1.8"
_SOURCE = {"system": "system", "user": "user", "assistant": "agent", "agent": "agent"}


def read_trajectory(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
        return value if isinstance(value, dict) else {"value": value}
    except (TypeError, json.JSONDecodeError):
        return {"raw": str(raw)}  # a malformed call stays visible, as data


def to_atif(trial_dir: Path) -> dict[str, Any]:
    tp = TrialPaths(Path(trial_dir))
    records = read_trajectory(tp.trajectory)
    found = read_delivery(tp)
    delivery = found.model_dump() if found else {}
    usage = read_usage(tp)
    steps = []
    for i, rec in enumerate(records, start=1):
        step: dict[str, Any] = {"step_id": i, "timestamp": rec.get("timestamp"),
                                "source": _SOURCE.get(rec.get("role", ""), "agent"), "message": rec.get("message", "")}
        if step["source"] == "agent" and delivery.get("model"):
            step["model_name"] = delivery["model"]
        if rec.get("tool_calls"):
            step["tool_calls"] = [{"tool_call_id": str(c.get("id")), "function_name": c.get("name"),
                                   "arguments": _arguments(c.get("arguments"))} for c in rec["tool_calls"]]
        if rec.get("observations"):
            calls = {c["tool_call_id"] for c in step.get("tool_calls", [])}
            results = [{**({"source_call_id": str(o.get("tool_call_id"))} if str(o.get("tool_call_id")) in calls
                           else {}), "content": o.get("content")} for o in rec["observations"]]
            step["observation"] = {"results": results}
        if rec.get("usage") or rec.get("cost_usd") is not None:
            u = rec.get("usage") or {}
            step["metrics"] = {k: v for k, v in {"prompt_tokens": u.get("prompt_tokens"),
                                                 "completion_tokens": u.get("completion_tokens"),
                                                 "cost_usd": rec.get("cost_usd")}.items() if v is not None}
        extra = {k: rec[k] for k in ("elapsed_sec", "retries", "kind") if k in rec}
        if extra:
            step["extra"] = extra
        steps.append(step)
    return {
        "schema_version": ATIF_VERSION,
        "session_id": tp.root.name,
        "agent": {"name": delivery.get("agent", "unknown"), "version": __version__,
                  **({"model_name": delivery["model"]} if delivery.get("model") else {}),
                  "extra": {"workbench_agent_status": delivery.get("agent_status"),
                            "network": delivery.get("network")}},
        "steps": steps,
        "final_metrics": {"total_prompt_tokens": usage.input_tokens if usage else None,
                          "total_completion_tokens": usage.output_tokens if usage else None,
                          "total_cost_usd": usage.cost_usd if usage else None, "total_steps": len(steps)},
    }
