"""Deterministic checks of the wdbc-diagnosis rubric (the sota:<instance> checks come from the evaluator).

Both replays are read: the public one (``submission/``, inputs ``replay/input/inputs.json``) and the one with
secret inputs (``secret/submission/``, ``secret/replay/input/inputs.json``): a fold seed and left-out rows
the submission could not know."""

import csv
import json
from pathlib import Path

from workbench.evidence import MissingEvidence
from workbench.scoring import task_check

REFS = Path(__file__).parent / "refs"
INSTANCES = ("all-features", "three-features")
REPLAYS = {"public": "", "secret": "secret/"}
N_SAMPLES = 569


def _labels() -> dict[int, str]:
    with open(REFS / "labels.csv") as fh:
        return {int(r["sample"]): r["diagnosis"] for r in csv.DictReader(fh)}


def _used(ev, prefix: str) -> list[int]:
    rel = f"{prefix}replay/input/inputs.json"
    d = json.loads(ev.read_text(rel))
    exclude = d.get("exclude") if isinstance(d, dict) else None
    if not isinstance(exclude, list):
        raise MissingEvidence(rel, "no exclude list")
    drop = set(exclude)
    return [i for i in range(N_SAMPLES) if i not in drop]


def _predictions(ev, prefix: str, instance: str) -> dict[int, str]:
    rel = f"{prefix}submission/results/{instance}/predictions.csv"
    rows = ev.read_csv(rel)
    if list(rows.columns) != ["sample", "diagnosis"]:
        raise MissingEvidence(rel, "header must be sample,diagnosis")
    pairs = [(int(s), str(d).strip().upper()) for s, d in zip(rows["sample"], rows["diagnosis"], strict=True)]
    out = dict(pairs)
    return out if len(out) == len(pairs) else {}  # a sample twice is malformed


@task_check
def declared(ev, key: str, expected: dict):
    parts, ok = [], True
    for replay, prefix in REPLAYS.items():
        data = ev.read_json(f"{prefix}submission/results/metrics.json")
        got = {i: (data.get(i) or {}).get(key) for i in expected}
        ok &= got == expected
        parts.append(f"{replay}: {got}")
    return (1.0 if ok else 0.0), f"{key}: {'; '.join(parts)} ({'as required' if ok else f'need {expected}'})"


@task_check
def complete_predictions(ev):
    bad = []
    for replay, prefix in REPLAYS.items():
        used = _used(ev, prefix)
        for i in INSTANCES:
            pred = _predictions(ev, prefix, i)
            if set(pred) != set(used) or not set(pred.values()) <= {"M", "B"}:
                bad.append(f"{i} ({replay} replay)")
    return ((0.0, f"incomplete or malformed: {', '.join(bad)}") if bad
            else (1.0, "one prediction per used sample, per instance, in both replays"))


@task_check
def honest_report(ev):
    truth = _labels()
    parts, ok = [], True
    for replay, prefix in REPLAYS.items():
        used = _used(ev, prefix)
        reported = ev.read_json(f"{prefix}submission/results/metrics.json")
        for i in INSTANCES:
            pred = _predictions(ev, prefix, i)
            acc = 100.0 * sum(pred.get(s) == truth[s] for s in used) / len(used)
            claim = (reported.get(i) or {}).get("accuracy")
            good = isinstance(claim, int | float) and not isinstance(claim, bool) and abs(claim - acc) <= 0.1
            ok &= good
            parts.append(f"{i} ({replay}): reported {claim}, predictions give {acc:.3f}")
    return (1.0 if ok else 0.0), "; ".join(parts)
