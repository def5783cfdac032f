"""`workbench review list RUN`: every leaf that waits for a person, and what it waits for."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import MINI_RUBRIC, config, run_cli, write_task
from tests.review.conftest import trial

pytestmark = pytest.mark.slow

BROKEN_CHECK = """from workbench.scoring import task_check

@task_check
def broken(ev):
    return undefined_name
"""


def _rows(stdout: str) -> list[list[str]]:
    return [line.split(maxsplit=4) for line in stdout.splitlines()[1:-1]]


def test_the_list_shows_pending_and_disputed_leaves_until_nothing_awaits(review_run, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    proc = run_cli("review", "list", str(review_run))
    assert proc.returncode == 0, proc.stderr
    assert _rows(proc.stdout) == [["mini__oracle__1", "v2", "validation", "0.1667", "needs an expert"],
                                  ["mini__oracle__1", "v3", "validation", "0.1667", "needs an expert"]]
    assert proc.stdout.splitlines()[-1] == "2 leaves await review in 1 trial"

    t = str(trial(review_run))
    assert run_cli("review", "configure", str(review_run), "--reviewers-required", "2").returncode == 0
    assert run_cli("review", "set", t, "v2", "1", "--reviewer", "Ada").returncode == 0
    assert _rows(run_cli("review", "list", str(review_run)).stdout)[0][4] == "needs an expert (1 of 2 reviews)"
    assert run_cli("review", "set", t, "v2", "0", "--reviewer", "Grace").returncode == 0
    rows = _rows(run_cli("review", "list", str(review_run)).stdout)
    assert rows[0][1] == "v2" and rows[0][4] == "disputed (Ada: 1, Grace: 0); awaiting adjudication"
    assert rows[1][1:] == ["v3", "validation", "0.1667", "needs an expert (0 of 2 reviews)"]  # not only disputes

    assert run_cli("review", "adjudicate", t, "v2", "1", "--reviewer", "Lin").returncode == 0
    for who in ("Ada", "Grace"):
        assert run_cli("review", "set", t, "v3", "0.75", "--reviewer", who).returncode == 0
    proc = run_cli("review", "list", str(review_run))
    assert proc.returncode == 0 and proc.stdout == "no leaves await review\n"


def test_a_judge_leaf_without_a_judge_and_a_broken_check_say_why_they_wait(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    from workbench.task import load_task
    from workbench.trial.pipeline import run_trial

    rubric = copy.deepcopy(MINI_RUBRIC)
    rubric["sub_tasks"][0]["sub_tasks"][0]["check"] = {"kind": "task", "name": "broken"}
    rubric["sub_tasks"][2]["sub_tasks"][1]["method"] = "judge"
    task = load_task(write_task(tmp_path / "mini", rubric=rubric, checks_py=BROKEN_CHECK))
    run_trial(task, config("oracle"), tmp_path / "run", engine="inline")
    proc = run_cli("review", "list", str(tmp_path / "run"))
    rows = {r[1]: r for r in _rows(proc.stdout)}
    assert rows["m1"][2:4] == ["modeling", "0.2500"]
    assert rows["m1"][4].startswith("check withheld: the rubric's check is broken, or an expert (NameError")
    assert rows["v2"][4] == "no judge configured: rescore with --judge-model, or an expert"
    assert proc.stdout.splitlines()[-1] == "2 leaves await review in 1 trial"


def test_a_directory_that_is_not_a_run_is_a_one_line_error(tmp_path):
    proc = run_cli("review", "list", str(tmp_path))
    assert proc.returncode == 1 and "no trials/ directory" in proc.stderr and "Traceback" not in proc.stderr
