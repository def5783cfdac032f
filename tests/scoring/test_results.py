"""scores.json's one reader."""

from __future__ import annotations

import pytest

from tests.review.conftest import ORACLE_R, _scored_run, review_run, trial  # noqa: F401 (fixtures)
from workbench.errors import ValidationProblem, WorkbenchError
from workbench.paths import TrialPaths
from workbench.scoring.results import read_scores


def test_a_trial_without_scores_reads_none_or_says_so(tmp_path):
    tp = TrialPaths(tmp_path / "t")
    assert read_scores(tp) is None
    with pytest.raises(WorkbenchError, match=r"scores.json: missing; score the trial first"):
        read_scores(tp, required=True)


def test_a_malformed_scores_file_names_the_file_and_the_field(tmp_path):
    tp = TrialPaths(tmp_path / "t")
    tp.root.mkdir()
    tp.scores.write_text('{"task": "x"}')
    with pytest.raises(ValidationProblem) as err:
        read_scores(tp)
    assert all(str(tp.scores) in p for p in err.value.problems) and any("R" in p for p in err.value.problems)


def test_a_scored_trial_reads_its_scores(review_run):  # noqa: F811
    scores = read_scores(TrialPaths(trial(review_run)), required=True)
    assert scores.R == pytest.approx(ORACLE_R) and {lf.id for lf in scores.leaves} >= {"m1", "v2"}
