"""Inside the confined reader's sandbox (see :mod:`workbench.reader.client`): read one request, answer in JSON
lines.

Run as ``python -m workbench.reader REQUEST.json`` (isolated, ``-I``) on the scoring runtime. Nothing imports this
module; it imports the readers it serves (check kinds, the judge's tools, the reviewer's previews). Each
answer line is flushed as soon as it is known, and every check announces itself before it starts, so the
host can tell which check a limit stopped.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def _checks(req: dict[str, Any]) -> None:
    from workbench.evidence import Evidence, MissingEvidence
    from workbench.scoring.checks import load_task_checks, run_check
    from workbench.scoring.faults import caused_by_submission, describe

    try:
        task_checks = load_task_checks(Path(req["checks_py"])) if req.get("checks_py") else {}
    except Exception as exc:  # the task's own code: not the submission's fault
        emit({"ready": False, "error": describe(exc)})
        return
    ev = Evidence(Path(req["evidence"]), req.get("provenance") or {}, receipts=req.get("receipts"))
    emit({"ready": True})
    for leaf in req["leaves"]:
        emit({"start": leaf["id"]})
        try:
            out = run_check(leaf["check"], ev, task_checks)
            outcome = {"score": out.score, "rationale": out.rationale, "refs": out.evidence_refs}
        except MissingEvidence as miss:
            outcome = {"missing": str(miss)}
        except RecursionError as exc:
            outcome = {"error": describe(exc), "code_fault": False}
        except Exception as exc:
            outcome = {"error": describe(exc), "code_fault": not caused_by_submission(exc)}
        emit({"leaf": leaf["id"], "outcome": outcome})


def _tools(req: dict[str, Any]) -> None:
    from workbench.evidence import Evidence
    from workbench.scoring.judge.evidence import run_tool

    ev = Evidence(Path(req["evidence"]), req.get("provenance") or {})
    emit({"ready": True})
    for i, call in enumerate(req["calls"]):
        try:
            text = run_tool(ev, call["name"], call.get("args") or {}, int(req["limit"]))
        except Exception as exc:  # a reader that chokes on the evidence answers the judge, it does not crash
            text = f"error: {type(exc).__name__}: {str(exc)[:300]}"
        emit({"tool": i, "text": text})


def _previews(req: dict[str, Any]) -> None:
    from workbench.evidence import Evidence
    from workbench.review.previews import preview

    ev = Evidence(Path(req["evidence"]), req.get("provenance") or {})
    emit({"ready": True})
    for ref in req["refs"]:
        try:
            html = preview(ev, ref, req.get("hashes") or {})
        except Exception as exc:
            import html as h

            html = f"<div style='color:#b00'>cannot preview {h.escape(ref)}: {h.escape(type(exc).__name__)}</div>"
        emit({"html": html})


OPS = {"checks": _checks, "tools": _tools, "previews": _previews}


def main(argv: list[str]) -> None:
    try:
        req = json.loads(Path(argv[0]).read_text())
        op = OPS[req["op"]]
    except Exception as exc:
        emit({"ready": False, "error": f"bad request: {exc}"})
        return
    op(req)


if __name__ == "__main__":
    main(sys.argv[1:])
