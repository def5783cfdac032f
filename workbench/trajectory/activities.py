"""Time allocation by activity, coded from an agent's tool actions by fixed rules (PaperBenchX, Fig. 6c).

Only tool-mediated time counts: a turn's duration is the ``elapsed_sec`` since the previous record,
split evenly over the turn's tool calls; turns without tool calls are not coded. Each call gets the
first activity whose rule matches its tool name and arguments (lower-cased text):

============================  =====================================================================
activity                      rule (first match wins)
============================  =====================================================================
evidence_and_replay           mentions ``reproduce.sh``, writes a README/REPORT, ``sha256sum``, or
                              the tools ``finish`` / ``submit_for_score``
paper_reconstruction          mentions ``paper/`` or ``instruction.md`` (reading the paper/contract)
implementation                the tool ``write_file``; shell that writes files (``cat >``, heredoc,
                              ``tee``, ``sed -i``, ``patch``, ``cp``, ``mv``, ``mkdir``,
                              ``pip install``)
diagnosis_and_tuning          ``python -c``; the tool ``read_file``; shell that inspects (``cat``,
                              ``tail``, ``head``, ``grep``, ``ls``, ``find``, ``diff``, ``wc``,
                              ``less``, ``du``); the tool ``time_left``
native_execution              shell that runs programs: ``python``/``python3``, ``mpirun``,
                              ``mpiexec``, ``pw.x``, ``ph.x``, ``julia``, ``Rscript``, ``make``,
                              ``bash X.sh``, ``./X``
uncoded                       anything else
============================  =====================================================================

The rules are deliberately simple and public, so two analysts code the same trajectory the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ACTIVITIES = ("paper_reconstruction", "implementation", "native_execution", "diagnosis_and_tuning",
          "evidence_and_replay")
LABELS = {"paper_reconstruction": "paper reconstruction", "implementation": "implementation",
          "native_execution": "native execution", "diagnosis_and_tuning": "diagnosis and tuning",
          "evidence_and_replay": "evidence and replay", "uncoded": "uncoded"}

RULES: list[tuple[str, re.Pattern[str]]] = [
    ("evidence_and_replay", re.compile(r"reproduce\.sh|readme|report\.md|sha256sum|^(finish|submit_for_score)\b")),
    ("paper_reconstruction", re.compile(r"paper/|instruction\.md")),
    ("implementation", re.compile(r"^write_file\b|cat\s*>|<<|\btee\b|sed\s+-i|\bpatch\b|\bcp\b|\bmv\b|\bmkdir\b"
                                  r"|pip3?\s+install")),
    ("diagnosis_and_tuning", re.compile(r"python3?\s+-c|^read_file\b|^time_left\b|\b(cat|tail|head|grep|ls|find"
                                        r"|diff|wc|less|du)\b")),
    ("native_execution", re.compile(r"\b(python3?|mpirun|mpiexec|pw\.x|ph\.x|julia|rscript|make)\b|bash\s+\S+\.sh"
                                    r"|(^|\s)\./")),
]


def call_text(call: dict[str, Any]) -> str:
    """A tool call as one lower-case line: its name, then its arguments."""
    args = call.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            pass
    if isinstance(args, dict):
        args = " ".join(str(v) for v in args.values())
    return f"{call.get('name', '')} {args or ''}".lower().strip()


def code_call(call: dict[str, Any]) -> str:
    text = call_text(call)
    for activity, rule in RULES:
        if rule.search(text):
            return activity
    return "uncoded"


def allocate(records: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds of tool-mediated time per activity for one trajectory (activities with no time are absent)."""
    out: dict[str, float] = {}
    previous = 0.0
    for rec in records:
        elapsed = rec.get("elapsed_sec")
        if elapsed is None:
            continue
        spent, previous = max(0.0, float(elapsed) - previous), float(elapsed)
        calls = rec.get("tool_calls") or []
        for call in calls:
            activity = code_call(call)
            out[activity] = out.get(activity, 0.0) + spent / len(calls)
    return out


def allocate_file(path: Path) -> dict[str, float]:
    from . import read_trajectory

    try:
        return allocate(read_trajectory(path))
    except (OSError, ValueError):
        return {}
