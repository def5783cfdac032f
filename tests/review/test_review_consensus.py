import pytest

from tests.conftest import run_cli
from tests.review.conftest import trial
from workbench.review import agreement
from workbench.store import Store

pytestmark = pytest.mark.slow

A = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
B = [1, 1, 1, 1, 0, 0, 0, 0, 0, 1]  # 8 of 10 agree; chance agreement 0.5 -> kappa 0.6


def _review(store, task, trial_id, leaf, who, score):
    store.add_review(run="r", trial_id=trial_id, task=task, leaf_id=leaf, reviewer=who, score=score,
                     previous_score=None)


def test_percent_agreement_and_kappa_per_task_and_overall(store_url):
    store = Store(store_url)
    for i, (a, b) in enumerate(zip(A, B, strict=True)):
        task = "alpha" if i < 5 else "beta"
        _review(store, task, f"{task}__x__1", f"L{i}", "Ada", 1 - a)  # superseded by Ada's later review
        _review(store, task, f"{task}__x__1", f"L{i}", "Ada", a)
        _review(store, task, f"{task}__x__1", f"L{i}", "Grace", b)
    _review(store, "beta", "beta__x__1", "single", "Ada", 1)  # one reviewer: not a pair
    res = agreement(store, "r")
    assert res["overall"]["leaves"] == 10 and res["overall"]["percent_agreement"] == pytest.approx(80.0)
    assert res["overall"]["kappa"] == pytest.approx(0.6)
    assert res["by_task"]["alpha"]["percent_agreement"] == pytest.approx(80.0)
    assert res["by_task"]["beta"]["agree"] == 4
    assert set(res["pairs"].reviewer_a) == {"Ada"} and set(res["pairs"].reviewer_b) == {"Grace"}


def test_review_commands_from_the_shell(review_run):
    t = str(trial(review_run))
    proc = run_cli("review", "configure", str(review_run), "--reviewers-required", "2")
    assert proc.returncode == 0 and "2 reviewer(s) per leaf" in proc.stdout
    assert run_cli("review", "set", t, "v2", "1", "--reviewer", "Ada").returncode == 0
    proc = run_cli("review", "set", t, "v2", "0", "--reviewer", "Grace", "--comment", "no numbers")
    assert proc.returncode == 0 and "leaf disputed" in proc.stdout
    proc = run_cli("review", "queue", str(review_run))
    assert "mini__oracle__1 v2" in proc.stdout and "Grace: 0 (no numbers)" in proc.stdout
    proc = run_cli("review", "agreement", str(review_run))
    assert proc.returncode == 0 and "overall" in proc.stdout and "0.0" in proc.stdout
    proc = run_cli("review", "adjudicate", t, "v2", "1", "--reviewer", "Lin")
    assert proc.returncode == 0 and "leaf adjudicated 1" in proc.stdout and "R 0.6667 -> 0.8333" in proc.stdout
    assert "no disputed leaves" in run_cli("review", "queue", str(review_run)).stdout
    bad = run_cli("review", "set", t, "v2", "0.5", "--reviewer", "Ada")
    assert bad.returncode == 1 and "must be 0 or 1" in bad.stderr
