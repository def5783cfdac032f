"""Uncertainty for every number the report gives: bootstrap confidence intervals clustered by task,
full@k over attempts, and paired comparisons of configurations.

Outcomes of one task are not independent (a hard task is hard for every attempt), so intervals resample
*tasks* with replacement and recompute the statistic over all attempts of the tasks drawn: the cluster
bootstrap. The resampling itself is :func:`scipy.stats.bootstrap` (percentile intervals over task
indices, a fixed seed so a report is reproducible); nothing here resamples by hand. Below
:data:`MIN_TASKS` tasks no interval is given (NaN): two tasks do not say how the next would go.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd

CONFIDENCE = 0.95
N_RESAMPLES = 2000
SEED = 0
MIN_TASKS = 3  # fewer tasks than this: no interval


def cluster_ci(values, clusters, *, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
               seed: int = SEED) -> tuple[float, float]:
    """The confidence interval of the mean of ``values``, resampling their ``clusters`` (tasks).

    Args:
        values: one number per outcome (NaN: not counted).
        clusters: the outcome's cluster (its task), aligned with ``values``.
        confidence: the interval's confidence level.
        n_resamples: bootstrap resamples.
        seed: the random generator's seed.

    Returns:
        (low, high), or (NaN, NaN) with fewer than :data:`MIN_TASKS` clusters.
    """
    from scipy.stats import bootstrap

    df = pd.DataFrame({"v": np.asarray(values, dtype=float), "c": np.asarray(clusters)}).dropna(subset=["v"])
    groups = df.groupby("c")["v"]
    sums, counts = groups.sum().to_numpy(), groups.count().to_numpy().astype(float)
    if len(sums) < MIN_TASKS:
        return float("nan"), float("nan")
    if np.allclose(sums / counts, (sums / counts)[0]):  # every task the same mean: nothing to resample
        mean = float(sums.sum() / counts.sum())
        return mean, mean

    def mean_of_tasks(idx, axis=-1):
        idx = idx.astype(int)
        return sums[idx].sum(axis=axis) / counts[idx].sum(axis=axis)

    res = bootstrap((np.arange(len(sums)),), mean_of_tasks, vectorized=True, n_resamples=n_resamples,
                    confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def full_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` attempts drawn from ``n`` (``c`` of them full) is full: the
    unbiased pass@k estimator (Chen et al. 2021), ``1 - C(n-c, k) / C(n, k)``."""
    if k > n:
        raise ValueError(f"k = {k} is more than the {n} attempts")
    return 1.0 - comb(n - c, k) / comb(n, k)


def at_k(o: pd.DataFrame, flag: str = "is_full", ks: tuple[int, ...] = (1, 2, 3, 5)) -> pd.DataFrame:
    """Per configuration and k: the share of tasks solved at least once in k attempts (``flag``: ``is_full``
    for full@k), estimated from every task's attempts, with its interval over tasks and the tasks behind it.
    Only k up to the fewest attempts any task of the configuration has."""
    rows = []
    for cfg, g in o.dropna(subset=[flag]).groupby("config", sort=True):
        per = g.groupby("task")[flag].agg(n="count", c=lambda s: int(s.astype(bool).sum()))
        for k in ks:
            if k > per["n"].min():
                break
            est = np.array([full_at_k(int(n), int(c), k) for n, c in zip(per["n"], per["c"], strict=True)])
            low, high = cluster_ci(est, per.index)
            rows.append({"config": cfg, "k": k, "rate": 100 * est.mean(), "rate_ci_low": 100 * low,
                         "rate_ci_high": 100 * high, "tasks": len(per)})
    return pd.DataFrame(rows, columns=["config", "k", "rate", "rate_ci_low", "rate_ci_high", "tasks"])


def paired(o: pd.DataFrame, a: str, b: str, value: str = "score") -> dict[str, float | int | str]:
    """Configuration ``a`` minus ``b`` on the tasks both have counted outcomes for: the mean over those tasks
    of the per-task difference of means of ``value``, with its interval over tasks."""
    means = o.dropna(subset=[value]).groupby(["config", "task"])[value].mean().unstack("config")
    both = means[[a, b]].dropna() if a in means and b in means else pd.DataFrame(columns=[a, b])
    diff = (both[a] - both[b]).to_numpy(dtype=float)
    low, high = cluster_ci(diff, both.index) if len(diff) else (float("nan"), float("nan"))
    return {"a": a, "b": b, "difference": float(diff.mean()) if len(diff) else float("nan"),
            "difference_ci_low": low, "difference_ci_high": high, "tasks": len(diff)}


def paired_table(o: pd.DataFrame, value: str = "score", scale: float = 100.0) -> pd.DataFrame:
    """Every pair of configurations (each against each, the better-scoring first), in points of ``value``."""
    configs = sorted(o["config"].dropna().unique())
    rows = []
    for i, a in enumerate(configs):
        for b in configs[i + 1:]:
            p = paired(o, a, b, value)
            if p["difference"] < 0:
                p = paired(o, b, a, value)
            rows.append({**p, **{k: p[k] * scale for k in ("difference", "difference_ci_low", "difference_ci_high")}})
    return pd.DataFrame(rows, columns=["a", "b", "difference", "difference_ci_low", "difference_ci_high", "tasks"])


def interval(low: float, high: float, digits: int = 1) -> str:
    """``[38.1, 52.0]``, or ``–`` where there is no interval."""
    return "–" if pd.isna(low) or pd.isna(high) else f"[{low:,.{digits}f}, {high:,.{digits}f}]"
