"""Hidden evaluator (NatureBench contract): run_evaluation() -> {instance: {metric: value}}.

Accuracy in percent of each instance's out-of-fold predictions against the private labels. A missing or
malformed prediction file gives ``accuracy: None`` with an ``error``, never a number.
"""

import csv
from pathlib import Path

INSTANCES = ("all-features", "three-features")


def _labels(refs: Path) -> dict[int, str]:
    with open(refs / "labels.csv") as fh:
        return {int(r["sample"]): r["diagnosis"] for r in csv.DictReader(fh)}


def _accuracy(path: Path, truth: dict[int, str]) -> dict:
    if not path.is_file():
        return {"accuracy": None, "error": f"{path.name} missing"}
    try:
        with open(path, newline="") as fh:
            got = {int(r["sample"]): str(r["diagnosis"]).strip().upper() for r in csv.DictReader(fh)}
    except (KeyError, ValueError, csv.Error, UnicodeDecodeError) as exc:
        return {"accuracy": None, "error": f"unreadable predictions: {exc}"}
    if set(got) != set(truth) or not set(got.values()) <= {"M", "B"}:
        return {"accuracy": None, "error": "predictions must cover samples 0..568 with M or B"}
    return {"accuracy": 100.0 * sum(got[i] == truth[i] for i in truth) / len(truth), "n": len(truth)}


def run_evaluation(evidence_dir=".", refs_dir=None) -> dict:
    evidence = Path(evidence_dir)
    refs = Path(refs_dir) if refs_dir else Path(__file__).parent / "refs"
    truth = _labels(refs)
    return {i: _accuracy(evidence / "submission" / "results" / i / "predictions.csv", truth) for i in INSTANCES}
