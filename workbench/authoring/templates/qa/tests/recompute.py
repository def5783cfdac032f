"""The scorer's own computation (PRIVATE). Runs in the task's environment, confined, on the frozen evidence
of both replays (`submission/` the first, `secret/submission/` the one with drawn inputs, each replay's
inputs under `replay/input/`). Returns {"score": 0..1, "rationale": "..."}.

The questions are scored on the public replay's answers; this gate makes them count only when both replays'
answers are what their own inputs give, so answers typed in or stored for the published inputs score 0."""

import json
import math
from pathlib import Path


def _estimate(seed: int, n: int) -> float:
    # TODO(author): the same science, written independently of the solution (not imported from it)
    raise NotImplementedError("TODO(author): the scorer's computation")


def _expected(seed: int, n: int) -> tuple[float, dict]:
    """The estimate and, per question, what an answer must hold (TODO(author): your questions)."""
    value = _estimate(seed, n)
    inside = round(value * n / 4)
    return value, {"mcq1": ["A"] if value > math.pi else ["B"], "oeq1": str(inside)}


def answers(evidence: Path) -> dict:
    """Each replay's estimate and answers are exactly what its own inputs give."""
    notes = []
    for label, pre in (("public", ""), ("secret", "secret/")):
        inputs = json.loads((evidence / pre / "replay/input/inputs.json").read_text())
        claimed = json.loads((evidence / pre / "submission/results/estimate.json").read_text())
        given = json.loads((evidence / pre / "submission/results/answers.json").read_text())
        n = int(claimed["n"])
        if not 1 <= n <= 10_000_000:
            return {"score": 0.0, "rationale": f"{label} replay: n = {n} is out of range"}
        value, want = _expected(int(inputs["seed"]), n)
        if claimed.get("estimate") != value:
            return {"score": 0.0, "rationale": f"{label} replay: estimate {claimed.get('estimate')} is not "
                                               f"{value}, what seed {inputs['seed']} and n = {n} give"}
        for qid, truth in want.items():
            got = given.get(qid)
            ok = sorted(got or []) == truth if isinstance(truth, list) else truth in str(got)
            if got is not None and not ok:
                return {"score": 0.0, "rationale": f"{label} replay: {qid} answered {got!r}; its inputs give {truth}"}
        notes.append(f"{label}: estimate {value} for seed {inputs['seed']}, n = {n}")
    return {"score": 1.0, "rationale": "recomputed exactly: " + "; ".join(notes)}
