"""A hidden scoring service for sessions (NatureBench's evaluation service; EurekAgent's permission
engineering): the agent submits its current package and gets the official score, never the evaluator.

The service listens on 127.0.0.1 with a per-session token. ``POST /evaluate`` (``Authorization:
Bearer <token>``, optional JSON ``{"description": ...}``) copies the working copy, replays it in a clean
sandbox exactly as the final replay will, scores it with the task's private scorer, and answers with
only what the task's mode is meant to expose (:func:`workbench.scoring.modes.feedback_for`; NatureBench's
``sota`` tasks: each instance's metric, g and band; a hidden rubric: the replay's outcome only, since R
and phase scores would let an agent hill-climb private leaves), plus the best attempt so far. Leaf
rationales are never returned (they quote private targets). ``GET /best`` repeats the best attempt.
While it evaluates, the session clock is paused.

Every attempt is appended by the service to ``TRIAL/session/scoring/attempts.jsonl`` (and the best to
``best.json``; :mod:`workbench.session.ledger` holds their models), a host path that is never mounted
into the agent's sandbox, so the agent cannot write or forge it.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..io import atomic_write_json, copy_tree, remove_tree
from ..paths import TrialPaths
from ..sandbox.cpus import borrowing
from ..sandbox.gpus import Lease, lending
from ..task import Task
from .ledger import ScoringAttempt, ScoringResult, ServiceSummary

log = logging.getLogger(__name__)
MAX_BODY = 64_000


class ScoringService:
    def __init__(self, task: Task, candidate: Callable[[Path], None], trial: TrialPaths, *, pause=None,
                 timeout: float | None = None, sandbox: str = "bwrap", owner: str | None = None,
                 gpus: Lease | None = None):
        self.task = task
        self.candidate = candidate  # writes the agent's current package into a fresh directory (a snapshot)
        self.trial = trial  # the log goes to its session/scoring/
        self.trial.scoring_service.mkdir(parents=True, exist_ok=True)
        self.pause = pause  # a context manager factory pausing the session clock
        self.timeout = timeout
        self.sandbox = sandbox  # the session's backend: attempts replay exactly as the final replay will
        self.owner = owner  # the session's workspace: a CLI agent waiting on us lends its cores (sandbox.cpus)
        self.gpus = gpus  # the session's GPU lease: the GPUs it holds while it waits on us are lent to the replay
        self.token = secrets.token_urlsafe(24)
        self.attempts: list[ScoringAttempt] = []
        self.best: ScoringResult | None = None
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --- evaluation ----------------------------------------------------------------------------

    def score_submission(self, description: str = "") -> ScoringAttempt:
        """Replay and score the current candidate; one evaluation at a time."""
        with self._lock:
            with self.pause() if self.pause else contextlib.nullcontext():
                return self._evaluate(description[:2000])

    def _replay_candidate(self, work: Path):
        """The agent's current package, snapshotted, replayed and scored: (package, provenance, scores)."""
        from ..replay.trial import replay_trial
        from ..scoring.trial import score_trial

        sub = work / "submission"
        self.candidate(sub)  # taken inside the session's sandbox: an agent racing it reaches nothing private
        prov = replay_trial(self.task, sub, work / "trial", timeout=self.timeout, sandbox=self.sandbox)
        return sub, prov, score_trial(self.task, work / "trial")

    def _evaluate(self, description: str) -> ScoringAttempt:
        from ..scoring.modes import feedback_for

        n = len(self.attempts) + 1
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix="workbench-scoring-"))
        os.chmod(work, 0o711)  # the session's sandbox user writes the snapshot into it
        snapshot: Path | None = None
        try:
            with borrowing(self.owner), lending(self.gpus.held if self.gpus else None):
                sub, prov, scores = self._replay_candidate(work)
            shown = feedback_for(self.task)
            fields: dict[str, Any] = {"replay": prov.status, "failure_reasons": prov.failure_reasons}
            if "R" in shown:
                fields.update(R=round(scores.R, 6), coverage=round(scores.coverage, 6))
            if "phases" in shown:
                fields["phases"] = {k: round(v, 6) for k, v in scores.phases.items()}
            if "sota" in shown and scores.sota:
                fields["sota"] = {"g": scores.sota.get("g"), "band": scores.sota.get("band"),
                                  "instances": {k: {x: v.get(x) for x in ("metric", "value", "g", "band")}
                                                for k, v in scores.sota.get("instances", {}).items()}}
            if "discovery" in shown and scores.discovery:
                fields["discovery"] = {k: scores.discovery.get(k) for k in ("metric", "valid", "message")}
            if "qa" in shown and scores.qa:
                fields["qa"] = {k: scores.qa.get(k) for k in ("mcq_accuracy", "oeq_mean", "oeq_pending")}
            snapshot = sub
        except Exception as exc:  # an evaluation that fails is reported to the agent and logged, never fatal
            log.warning("scoring service: attempt %d failed: %s", n, exc)
            fields = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        try:
            result = ScoringResult(attempt=n, evaluation_sec=round(time.monotonic() - started, 3), **fields)
            sign = -1 if self.task.scoring == "discovery" and self.task.discovery_spec.direction == "minimize" else 1
            if result.error is None and (self.best is None or _key(result, sign) > _key(self.best, sign)):
                self.best = result
                if snapshot is not None:  # the package that earned it, where no session can write
                    remove_tree(self.trial.best_submission)
                    copy_tree(snapshot, self.trial.best_submission, metadata=False)
        finally:
            remove_tree(work)
        attempt = ScoringAttempt(**result.model_dump(), at=datetime.now(UTC).isoformat(timespec="seconds"),
                                 description=description, best=self.best)
        self.attempts.append(attempt)
        with open(self.trial.attempts, "a", encoding="utf-8") as fh:
            fh.write(attempt.model_dump_json(exclude_none=True) + "\n")
        if self.best is not None:
            atomic_write_json(self.trial.best, self.best.model_dump(exclude_none=True))
        return attempt

    def summary(self) -> ServiceSummary:
        return ServiceSummary(attempts=len(self.attempts), best=self.best,
                              evaluation_sec=round(sum(a.evaluation_sec for a in self.attempts), 3))

    # --- HTTP ----------------------------------------------------------------------------------

    def start(self) -> str:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, fmt, *args):  # quiet: attempts are logged by the service
                log.debug("scoring service: " + fmt, *args)

            def _send(self, code: int, body: dict) -> None:
                data = json.dumps(body, default=str).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
                if hmac.compare_digest(given.encode(), service.token.encode()):
                    return True
                self._send(403, {"error": "missing or wrong token"})
                return False

            def do_GET(self):
                if self.path == "/health":
                    return self._send(200, {"ok": True})
                if not self._authorized():
                    return None
                if self.path == "/best":
                    best = service.best.model_dump(exclude_none=True) if service.best else None
                    return self._send(200, {"best": best, "attempts": len(service.attempts)})
                return self._send(404, {"error": "unknown path; use POST /evaluate or GET /best"})

            def do_POST(self):
                if not self._authorized():
                    return None
                if self.path != "/evaluate":
                    return self._send(404, {"error": "unknown path; use POST /evaluate"})
                length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                desc = str(body.get("description", "")) if isinstance(body, dict) else ""
                return self._send(200, service.score_submission(desc).answer())

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True, name="scoring-service").start()
        return self.url

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the service first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScoringService:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _key(result: ScoringResult, sign: int = 1) -> tuple[bool, float, float, float, bool, int]:
    """Attempts are ranked only by what the agent is shown (so "best" leaks nothing more): a valid
    discovery construction by its metric (``sign`` -1 when smaller is better), then g, then R, then a replay
    that succeeded, then the latest."""
    d = result.discovery or {}
    found = d.get("valid") is True and isinstance(d.get("metric"), int | float)
    g = (result.sota or {}).get("g")
    return (found, sign * d["metric"] if found else float("-inf"), g if g is not None else float("-inf"),
            result.R if result.R is not None else float("-inf"), result.replay == "succeeded", result.attempt)
