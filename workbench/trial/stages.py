"""The four stages as plain functions: what a stage notebook calls, and what the inline engine calls.

Each takes paths and simple values (so papermill can pass them as parameters) and returns a small
JSON-able summary (what the notebook glues and the pipeline records). Both engines therefore run
the same code and write the same files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..paths import TrialPaths


def session(task_dir: str, trial_dir: str, config: dict[str, Any], sandbox: str = "bwrap") -> dict[str, Any]:
    """Stage 1: the agent configuration works on the starter submission; returns the delivery record."""
    from ..session.run import run_session
    from ..task import load_task

    return run_session(load_task(task_dir), config, Path(trial_dir), sandbox=sandbox).model_dump()


def replay(task_dir: str, trial_dir: str, timeout: float | None = None, sandbox: str = "bwrap") -> dict[str, Any]:
    """Stage 2: clean replay of the delivered submission; returns the provenance essentials."""
    from ..replay.trial import replay_trial
    from ..task import load_task

    tp = TrialPaths(Path(trial_dir))
    prov = replay_trial(load_task(task_dir), tp.submission, tp.root, timeout=timeout, sandbox=sandbox)
    return {k: getattr(prov, k) for k in ("status", "failure_reasons", "exit_code", "wall_sec", "timed_out",
                                          "sources_changed", "evidence_manifest_digest")}


def score(task_dir: str, trial_dir: str, judge: dict[str, Any] | None = None) -> dict[str, Any]:
    """Stage 3: score the frozen evidence (with the LLM judge when ``judge`` names a model); returns R,
    phases and leaf counts by status. The judge's API key comes from the environment, never a parameter."""
    from ..scoring import score_trial
    from ..scoring.judge.settings import JudgeSettings
    from ..task import load_task

    settings = JudgeSettings.from_env(**judge) if judge else None
    s = score_trial(load_task(task_dir), Path(trial_dir), judge=settings)
    counts: dict[str, int] = {}
    for lf in s.leaves:
        counts[lf.status] = counts.get(lf.status, 0) + 1
    return {"R": s.R, "R_upper": s.R_upper, "full": s.full, "coverage": s.coverage, "final": s.final,
            "phases": s.phases, "needs_rescoring": s.needs_rescoring, "leaf_status": counts,
            "fingerprint": s.fingerprint["digest"], "judge_usage": s.judge_usage,
            "fingerprint_changes": s.fingerprint_changes}


def review(task_dir: str, trial_dir: str) -> dict[str, Any]:
    """Stage 4: what awaits an expert (pending review, withheld, disputed); returns the queue."""
    from ..scoring.results import AWAITING, read_scores

    tp = TrialPaths(Path(trial_dir))
    scores = read_scores(tp, required=True)
    queue = [{"id": lf.id, "title": lf.title, "phase": lf.phase, "status": lf.status, "method": lf.method,
              "effective_weight": lf.effective_weight, "evidence_refs": lf.evidence_refs}
             for lf in scores.leaves if lf.status in AWAITING]
    return {"queue": queue, "awaiting": len(queue),
            "awaiting_weight": sum(q["effective_weight"] for q in queue)}


RUNNERS = {"session": session, "replay": replay, "score": score, "review": review}
