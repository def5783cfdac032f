"""The hidden evaluator (PRIVATE; NatureBench's contract): ``run_evaluation(evidence_dir, refs_dir)`` returns
``{instance: {metric: value}}``. It runs confined in the task's environment with the frozen evidence of both
replays (``submission/`` the public one, ``secret/submission/`` the one with drawn inputs, each replay's inputs
under ``replay/input/``); ``tests/sota.json`` names each instance's primary metric and the paper's value.

Measure from your own computation, never from the shipped number alone: a metric read straight from a file
the submission wrote is the submission's claim. The example recomputes both replays' estimates from their
inputs (with ``_estimate`` of recompute.py); the metric counts only when both agree with what the submission
wrote, and a value of None is the failure floor (g = -1) with the reason."""

import importlib.util
import json
import math
from pathlib import Path


def _estimate(seed: int, n: int) -> float:
    """The scorer's own computation, from recompute.py beside this file (one copy of the science)."""
    spec = importlib.util.spec_from_file_location("task_recompute", Path(__file__).with_name("recompute.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod._estimate(seed, n)


def run_evaluation(evidence_dir=".", refs_dir=None) -> dict:
    evidence = Path(evidence_dir)
    found = {}
    for label, pre in (("public", ""), ("secret", "secret/")):
        try:
            inputs = json.loads((evidence / pre / "replay/input/inputs.json").read_text())
            claimed = json.loads((evidence / pre / "submission/results/estimate.json").read_text())
            n = int(claimed["n"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return {"published-inputs": {"abs_error": None, "error": f"{label} replay: {exc}"}}
        if not 1 <= n <= 10_000_000:
            return {"published-inputs": {"abs_error": None, "error": f"{label} replay: n = {n} is out of range"}}
        want = _estimate(int(inputs["seed"]), n)
        if claimed.get("estimate") != want:
            return {"published-inputs": {"abs_error": None,
                                         "error": f"{label} replay: estimate {claimed.get('estimate')} is not "
                                                  f"{want}, what its inputs give"}}
        found[label] = want
    return {"published-inputs": {"abs_error": abs(found["public"] - math.pi), "secret_estimate": found["secret"]}}
