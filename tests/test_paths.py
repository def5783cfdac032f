"""Every on-disk layout, defined once: each path the code names is in the module's drawn tree, and a trial
knows the run it belongs to."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbench.paths as paths
from tests.conftest import write_task
from workbench.paths import RunPaths, TaskPaths, TrialPaths, run_of

ROOT = Path("/R")


def _named(cls) -> list[tuple[str, Path]]:
    """(property, path relative to the root) of every path a layout class names."""
    obj = cls(ROOT)
    return [(name, getattr(obj, name).relative_to(ROOT)) for name, v in vars(cls).items() if isinstance(v, property)]


NAMED = [pytest.param(cls.__name__, prop, rel, id=f"{cls.__name__}.{prop}")
         for cls in (TaskPaths, TrialPaths, RunPaths) for prop, rel in _named(cls)]


@pytest.mark.parametrize(("layout", "prop", "rel"), NAMED)
def test_every_named_path_is_in_the_drawn_tree(layout, prop, rel):
    doc = paths.__doc__
    assert rel.name in doc, f"{layout}.{prop} = {rel} is not drawn in workbench/paths.py's docstring"


def test_the_trial_layout_is_the_documented_one():
    tp = RunPaths(ROOT).trial("t1")
    assert tp == TrialPaths(ROOT / "trials" / "t1")
    rel = {p: getattr(tp, p).relative_to(tp.root).as_posix() for p in (
        "trial_json", "submission", "trajectory", "usage", "delivery", "provenance", "receipts", "stdout_log",
        "manifest", "scores", "notebooks")}
    assert rel == {"trial_json": "trial.json", "submission": "session/submission",
                   "trajectory": "session/trajectory.jsonl", "usage": "session/usage.json",
                   "delivery": "session/delivery.json", "provenance": "replay/provenance.json",
                   "receipts": "replay/receipts.json", "stdout_log": "replay/stdout.log",
                   "manifest": "evidence/MANIFEST.sha256", "scores": "scores.json", "notebooks": "notebooks"}


def test_a_written_task_has_the_parts_task_paths_name(tmp_path):
    tp = TaskPaths(write_task(tmp_path / "mini"))
    for p in (tp.task_toml, tp.instruction, tp.dockerfile, tp.paper_dir / "paper.md", tp.starter / "reproduce.sh",
              tp.solution / "reproduce.sh", tp.rubric):
        assert p.is_file(), p
    assert not tp.install_sh.exists() and not tp.checks_py.exists()  # optional parts, absent here
    assert {tp.solution.name, tp.tests.name, tp.calibration.name} == set(paths.PRIVATE_DIRS)


def test_run_of_a_trial_inside_a_run_is_the_run(tmp_path, monkeypatch):
    run = RunPaths(tmp_path / "runs" / "r1")
    trial = run.trial("mini__oracle__1").root
    trial.mkdir(parents=True)
    assert run_of(trial) == run.root
    monkeypatch.chdir(run.trials)
    assert run_of("mini__oracle__1") == run.root  # a relative path is resolved first


def test_run_of_a_trial_outside_a_run_is_none(tmp_path):
    assert run_of(tmp_path / "my-trial") is None
    assert run_of(tmp_path / "trial" / "session") is None
