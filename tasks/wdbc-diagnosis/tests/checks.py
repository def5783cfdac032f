"""Deterministic checks of the wdbc-diagnosis rubric (the sota:<instance> checks come from the evaluator)."""

import csv
from pathlib import Path

from workbench.evidence import MissingEvidence
from workbench.scoring import task_check

REFS = Path(__file__).parent / "refs"
INSTANCES = ("all-features", "three-features")
METRICS = "submission/results/metrics.json"


def _labels() -> dict[int, str]:
    with open(REFS / "labels.csv") as fh:
        return {int(r["sample"]): r["diagnosis"] for r in csv.DictReader(fh)}


def _predictions(ev, instance: str) -> dict[int, str]:
    rel = f"submission/results/{instance}/predictions.csv"
    rows = ev.read_csv(rel)
    if list(rows.columns) != ["sample", "diagnosis"]:
        raise MissingEvidence(rel, "header must be sample,diagnosis")
    return {int(s): str(d).strip().upper() for s, d in zip(rows["sample"], rows["diagnosis"], strict=True)}


@task_check
def declared(ev, key: str, expected: dict):
    data = ev.read_json(METRICS)
    got = {i: (data.get(i) or {}).get(key) for i in expected}
    ok = got == expected
    return (1.0 if ok else 0.0), f"{key}: {got} ({'as required' if ok else f'need {expected}'})"


@task_check
def complete_predictions(ev):
    truth = _labels()
    bad = []
    for i in INSTANCES:
        pred = _predictions(ev, i)
        if set(pred) != set(truth) or not set(pred.values()) <= {"M", "B"}:
            bad.append(i)
    return (0.0, f"incomplete or malformed: {', '.join(bad)}") if bad else (1.0, "569 predictions per instance")


@task_check
def honest_report(ev):
    truth = _labels()
    reported = ev.read_json(METRICS)
    parts, ok = [], True
    for i in INSTANCES:
        pred = _predictions(ev, i)
        acc = 100.0 * sum(pred.get(s) == d for s, d in truth.items()) / len(truth)
        claim = (reported.get(i) or {}).get("accuracy")
        good = isinstance(claim, int | float) and abs(claim - acc) <= 0.1
        ok &= good
        parts.append(f"{i}: reported {claim}, predictions give {acc:.3f}")
    return (1.0 if ok else 0.0), "; ".join(parts)
