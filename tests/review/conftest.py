"""A scored run to review: the mini task (plus a continuous expert leaf) x {oracle, nop}."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from tests.conftest import MINI_RUBRIC, config, write_task

REVIEW_RUBRIC = copy.deepcopy(MINI_RUBRIC)
REVIEW_RUBRIC["sub_tasks"][2]["sub_tasks"].append(
    {"id": "v3", "weight": 1, "task_category": "Validation", "requirements": "how convincing is the value?",
     "method": "expert", "scale": "continuous", "evidence_inputs": [{"path": "submission/results/value.json"}]})
# effective weights: m1 1/4, e1 1/4, v1 v2 v3 1/6 each; the oracle earns m1, e1, v1 before review
ORACLE_R = 0.25 + 0.25 + 1 / 6
SIXTH = 1 / 6


@pytest.fixture(scope="session")
def _scored_run(tmp_path_factory):
    from workbench.task import load_task
    from workbench.trial.pipeline import run_trial

    root = tmp_path_factory.mktemp("review-template")
    task = load_task(write_task(root / "mini", rubric=REVIEW_RUBRIC))
    for agent in ("oracle", "nop"):
        run_trial(task, config(agent), root / "run", engine="inline")
    return root


@pytest.fixture
def review_run(_scored_run, tmp_path) -> Path:
    """A fresh copy of the scored run (its own store), with the task beside it: tmp/run, tmp/mini."""
    import json

    shutil.copytree(_scored_run / "mini", tmp_path / "mini")
    shutil.copytree(_scored_run / "run", tmp_path / "run", symlinks=True)
    for rec in (tmp_path / "run" / "trials").glob("*/trial.json"):
        data = json.loads(rec.read_text())
        data["task_dir"] = str(tmp_path / "mini")
        rec.write_text(json.dumps(data))
    return tmp_path / "run"


def trial(run: Path, agent: str = "oracle") -> Path:
    return run / "trials" / f"mini__{agent}__1"


def leaves(trial_dir: Path) -> dict:
    import json

    return {lf["id"]: lf for lf in json.loads((trial_dir / "scores.json").read_text())["leaves"]}
