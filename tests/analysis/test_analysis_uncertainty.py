"""The report's intervals against independent computations on synthetic outcomes with a known spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.analysis import metrics
from workbench.analysis.uncertainty import at_k, cluster_ci, full_at_k, paired, paired_table


def _outcomes(tasks=60, attempts=3, task_sd=0.15, noise_sd=0.05, shift=0.0, config="A", seed=1) -> pd.DataFrame:
    """Scores with a task effect (sd ``task_sd``) and attempt noise (sd ``noise_sd``) around 0.5 + shift."""
    rng = np.random.default_rng(seed)
    effect = rng.normal(0.5, task_sd, tasks)
    rows = [{"config": config, "task": f"t{t:03d}", "attempt": a + 1,
             "score": float(np.clip(effect[t] + shift + rng.normal(0, noise_sd), 0, 1))}
            for t in range(tasks) for a in range(attempts)]
    o = pd.DataFrame(rows)
    o["is_full"] = (o["score"] > 0.7).astype("boolean")
    return o


def _normal_interval(o: pd.DataFrame) -> tuple[float, float]:
    """The textbook interval from the task means (tasks independent, equal attempts per task)."""
    from scipy.stats import t

    means = o.groupby("task")["score"].mean()
    se = means.std(ddof=1) / np.sqrt(len(means))
    q = t.ppf(0.975, len(means) - 1)
    return means.mean() - q * se, means.mean() + q * se


def test_the_cluster_interval_agrees_with_the_normal_theory_interval_over_tasks():
    o = _outcomes()
    low, high = cluster_ci(o["score"], o["task"])
    ref_low, ref_high = _normal_interval(o)
    assert low < o["score"].mean() < high
    assert low == pytest.approx(ref_low, abs=0.008) and high == pytest.approx(ref_high, abs=0.008)
    # four times the tasks: half the width, as 1/sqrt(n) says
    big = _outcomes(tasks=240, seed=2)
    b_low, b_high = cluster_ci(big["score"], big["task"])
    assert (b_high - b_low) / (high - low) == pytest.approx(0.5, abs=0.08)


def test_attempts_of_one_task_are_not_counted_as_independent():
    """With a strong task effect, resampling outcomes as if independent understates the uncertainty: the
    interval over tasks is wider by about sqrt(attempts)."""
    from scipy.stats import bootstrap

    o = _outcomes(attempts=9, task_sd=0.2, noise_sd=0.01)
    low, high = cluster_ci(o["score"], o["task"])
    naive = bootstrap((o["score"].to_numpy(),), np.mean, n_resamples=2000, method="percentile",
                      rng=np.random.default_rng(0)).confidence_interval
    assert (high - low) / (naive.high - naive.low) == pytest.approx(3.0, rel=0.25)


def test_a_frame_with_fewer_than_three_tasks_has_no_interval_and_equal_tasks_a_point():
    o = _outcomes(tasks=2)
    assert all(np.isnan(cluster_ci(o["score"], o["task"])))
    assert cluster_ci([0.5] * 6, ["a", "a", "b", "b", "c", "c"]) == (0.5, 0.5)


def test_full_at_k_is_the_unbiased_pass_at_k_estimator():
    assert full_at_k(5, 1, 1) == pytest.approx(0.2) and full_at_k(5, 1, 5) == 1.0 and full_at_k(3, 0, 2) == 0.0
    assert full_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)  # C(2,2)/C(4,2) = 1/6 of pairs hold no full attempt
    with pytest.raises(ValueError, match="more than the 3 attempts"):
        full_at_k(3, 1, 4)
    o = _outcomes(attempts=3)
    table = at_k(o)
    assert list(table["k"]) == [1, 2, 3] and (table["tasks"] == 60).all()
    assert table["rate"].is_monotonic_increasing  # more attempts, more tasks solved at least once
    assert table["rate"].iloc[0] == pytest.approx(100 * o["is_full"].astype(float).mean())
    assert (table["rate_ci_low"] <= table["rate"]).all() and (table["rate"] <= table["rate_ci_high"]).all()


def test_a_paired_comparison_finds_a_real_difference_and_none_where_there_is_none():
    a = _outcomes(config="A", seed=3)
    b = _outcomes(config="B", seed=3, shift=0.1)  # the same tasks, 0.1 better on each
    c = _outcomes(config="C", seed=4)  # the same population of tasks, other noise
    o = pd.concat([a, b, c.assign(task=a["task"])], ignore_index=True)
    d = paired(o, "B", "A")
    assert d["difference"] == pytest.approx(0.1, abs=0.01) and d["tasks"] == 60
    assert 0 < d["difference_ci_low"] < d["difference"] < d["difference_ci_high"]
    table = paired_table(o).set_index(["a", "b"])
    assert table.loc[("B", "A"), "difference"] == pytest.approx(10, abs=1)  # in points, the better first
    # A and C differ only by chance: the interval of their difference holds 0
    row = table.loc[("A", "C")] if ("A", "C") in table.index else table.loc[("C", "A")]
    assert row["difference_ci_low"] < 0 < row["difference_ci_high"]


def test_the_configuration_table_carries_intervals_and_the_tasks_behind_them():
    from tests.analysis.test_analysis_metrics import _trial
    from workbench.analysis import frames

    rows = [{**_trial("A", "t1", (t % 4) / 4, field="F", attempt=attempt, trial_id=f"t{t}__A__{attempt}",
                      full=t % 4 == 3), "task": f"t{t}"} for t in range(8) for attempt in (1, 2)]
    o = frames.outcomes(pd.DataFrame(rows))
    row = metrics.model_table(o).iloc[0]
    assert row["tasks"] == 8 and row["partial"] == pytest.approx(37.5)
    assert row["partial_ci_low"] < 37.5 < row["partial_ci_high"]
    assert row["full_rate"] == pytest.approx(25) and row["full_rate_ci_low"] < 25 < row["full_rate_ci_high"]
