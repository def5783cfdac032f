"""The public API: the nouns a notebook author uses are importable from the top, and cheaply."""

from __future__ import annotations

import subprocess
import sys

import pytest

import workbench
from tests.conftest import REPO


def test_every_public_name_resolves_to_the_object_of_its_module():
    from workbench.scoring.results import Scores
    from workbench.trial.pipeline import run_trial

    assert workbench.run_trial is run_trial and workbench.Scores is Scores
    for name in workbench.__all__:
        assert getattr(workbench, name) is not None, name
    assert set(dir(workbench)) == set(workbench.__all__)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'run_trail'"):
        workbench.run_trail  # noqa: B018


def test_importing_the_package_imports_none_of_its_heavy_parts():
    probe = ("import sys, workbench; print(sorted(m for m in ('pandas', 'sqlalchemy', 'papermill', 'workbench.task',"
             " 'workbench.scoring') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_docstring_example_runs_a_trial(tmp_path):
    from pathlib import Path

    import workbench as wb

    task = wb.load_task(REPO / "tasks" / "h2-pes")
    record = wb.run_trial(task, wb.AgentConfig(name="oracle", agent="oracle"), Path(tmp_path / "try"),
                          engine="inline")
    scores = wb.Scores.model_validate_json(next((tmp_path / "try" / "trials").glob("*/scores.json")).read_text())
    assert record.status == "complete" and record.outcome["R"] == scores.R > 0.9  # the judge's leaves wait
    # after a trial (which imported the replay package), the public names are still the functions: the
    # trial's submission replays again through wb.replay_trial
    from workbench.paths import TrialPaths

    delivered = TrialPaths(next((tmp_path / "try" / "trials").iterdir())).submission
    again = wb.replay_trial(task, delivered, tmp_path / "again")
    assert again.status == "succeeded", again.failure_reasons
    import pkgutil

    submodules = {m.name for m in pkgutil.iter_modules(wb.__path__)}
    assert not submodules & set(wb.__all__), "a public name that is a submodule's changes meaning on import"


def test_every_public_name_says_what_it_is_and_what_it_takes():
    """`?` in a notebook says something: each public function documents each parameter (an ``Args:`` entry)
    and what it returns; each class has a docstring of its own (a pydantic model's fields carry theirs), and
    one that is not a model documents its constructor's parameters."""
    import inspect
    import re

    missing = []
    for name in workbench.__all__:
        if name == "__version__":
            continue
        obj = getattr(workbench, name)
        own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
        if not own or not own.strip():
            missing.append(f"{name}: no docstring")
            continue
        if inspect.isclass(obj) and hasattr(obj, "model_fields"):
            continue
        params = [p for p in inspect.signature(obj).parameters if p not in ("self", "args", "kwargs")]
        args = own.split("Args:", 1)[1] if "Args:" in own else ""
        missing += [f"{name}: parameter {p!r} not in Args:" for p in params if not re.search(rf"^\s+{p}:", args, re.M)]
        if not inspect.isclass(obj) and "Returns:" not in own:
            missing.append(f"{name}: no Returns:")
    assert missing == []
