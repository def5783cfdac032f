"""The scorer's own computation (PRIVATE). Runs in the task's environment, confined, on the frozen evidence
of both replays (`submission/` the first, `secret/submission/` the one with drawn inputs, each replay's
inputs under `replay/input/`). Returns {"score": 0..1, "rationale": "..."}."""

import json
from pathlib import Path


def _estimate(seed: int, n: int) -> float:
    # TODO(author): the same science, written independently of the solution (not imported from it)
    raise NotImplementedError("TODO(author): the scorer's computation")


def estimate(evidence: Path) -> dict:
    """Each replay's estimate is exactly what its own inputs' seed and its declared sample count give."""
    notes = []
    for label, pre in (("public", ""), ("secret", "secret/")):
        inputs = json.loads((evidence / pre / "replay/input/inputs.json").read_text())
        claimed = json.loads((evidence / pre / "submission/results/estimate.json").read_text())
        n = int(claimed["n"])
        if not 1 <= n <= 10_000_000:
            return {"score": 0.0, "rationale": f"{label} replay: n = {n} is out of range"}
        want = _estimate(int(inputs["seed"]), n)
        if claimed.get("estimate") != want:
            return {"score": 0.0, "rationale": f"{label} replay: estimate {claimed.get('estimate')} is not "
                                               f"{want}, what seed {inputs['seed']} and n = {n} give"}
        notes.append(f"{label}: {want} for seed {inputs['seed']}, n = {n}")
    return {"score": 1.0, "rationale": "recomputed exactly: " + "; ".join(notes)}
