"""The paper's aggregate metrics (seed 001 Table 2, Figures 5 and 6) over an outcomes frame.

Every function takes the frame from :func:`.frames.outcomes` and returns a DataFrame or a dict;
percentages are 0-100. Withheld outcomes (``infra_error``) are left out of every mean and counted
where they are reported.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .frames import PHASE_SCORES, _true

TRIM = 0.10  # trimmed mean: drop this share of outcomes at each end
PHASES = {"modeling_score": "modeling", "execution_score": "execution", "validation_score": "validation"}


def trimmed_mean(values, trim: float = TRIM) -> float:
    """Mean after dropping floor(trim * n) values at each end (NaN when nothing is left)."""
    v = np.sort(np.asarray([x for x in values if pd.notna(x)], dtype=float))
    k = int(math.floor(trim * len(v)))
    v = v[k:len(v) - k]
    return float(v.mean()) if len(v) else float("nan")


def pearson(x, y) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if len(x) < 3 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _counted(o: pd.DataFrame) -> pd.DataFrame:
    return o[o["state"] != "infra_error"]


def model_table(o: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: partial score, full rate, refusal rate, phase scores, turns, hours, tokens, cost,
    and how many outcomes are provisional, missing or withheld."""
    rows = []
    for cfg, g in o.groupby("config", sort=True):
        c = _counted(g)
        ran = g[g["status"].isin(["complete"])]
        rows.append({
            "config": cfg, "model": g["model"].dropna().iloc[0] if g["model"].notna().any() else None,
            "outcomes": len(g), "partial": 100 * c["score"].mean(), "partial_upper": 100 * c["R_upper"].mean(),
            "full_rate": 100 * c["is_full"].mean(),
            "refusal_rate": 100 * ran["refused"].map(_true).mean() if len(ran) else np.nan,
            **{PHASES[p]: 100 * c[p].mean() for p in PHASE_SCORES},
            "turns": ran["turns"].astype(float).mean(), "turns_trimmed": trimmed_mean(ran["turns"]),
            "hours": ran["hours"].mean(), "tokens": ran["tokens"].mean(),
            "cost_usd": ran["agent_cost_usd"].astype(float).mean(),
            "cost_usd_total": ran["agent_cost_usd"].astype(float).sum(min_count=1),
            "provisional": int((g["state"] == "provisional").sum()), "refused_no_fallback": int(
                (g["state"] == "refused").sum()), "missing": int(g["state"].isin(["missing", "unfinished"]).sum()),
            "infra_error": int((g["state"] == "infra_error").sum()),
        })
    return pd.DataFrame(rows).sort_values("partial", ascending=False, ignore_index=True)


def domain_view(o: pd.DataFrame) -> dict[str, Any]:
    """Mean R (%) per configuration x field (fields hardest first), field difficulty (100 - mean over
    configurations) and the best configuration(s) per field."""
    c = _counted(o)
    heat = c.pivot_table(index="config", columns="field", values="score", aggfunc="mean") * 100
    difficulty = (100 - heat.mean(axis=0)).sort_values(ascending=False)
    heat = heat[difficulty.index]
    heat = heat.loc[heat.mean(axis=1).sort_values(ascending=False).index]
    best = {f: sorted(heat.index[np.isclose(heat[f], heat[f].max())]) for f in heat.columns}
    return {"heatmap": heat, "difficulty": difficulty, "best": best,
            "leads": pd.Series([m for v in best.values() for m in v]).value_counts()}


def phase_distributions(o: pd.DataFrame) -> pd.DataFrame:
    """Per phase over outcomes: n, mean, median, IQR and the 10th-90th percentile range (in %)."""
    c = _counted(o)
    rows = []
    for col, phase in PHASES.items():
        v = 100 * c[col].dropna().astype(float)
        q = v.quantile([0.10, 0.25, 0.50, 0.75, 0.90]) if len(v) else pd.Series([np.nan] * 5,
                                                                                 index=[.1, .25, .5, .75, .9])
        rows.append({"phase": phase, "n": len(v), "mean": v.mean(), "median": q[0.50], "q25": q[0.25],
                     "q75": q[0.75], "p10": q[0.10], "p90": q[0.90]})
    return pd.DataFrame(rows)


def turns_vs_score(o: pd.DataFrame) -> dict[str, Any]:
    """Per configuration: trimmed-mean turns against partial score, and Pearson r across configurations."""
    t = model_table(o)[["config", "turns_trimmed", "partial"]]
    return {"points": t, "r": pearson(t["turns_trimmed"], t["partial"])}


def solved_by_any(o: pd.DataFrame) -> dict[str, Any]:
    """Per task: configurations with at least one full outcome; how concentrated full outcomes are."""
    c = _counted(o)
    per_task = c.groupby("task").agg(full_outcomes=("is_full", "sum"),
                                     configs_solving=("config", lambda s: s[c.loc[s.index, "is_full"]].nunique()))
    per_task = per_task.astype(int).sort_values(["configs_solving", "full_outcomes"], ascending=False)
    solved = per_task[per_task["configs_solving"] > 0]
    return {"per_task": per_task, "outcomes": len(c), "full_outcomes": int(c["is_full"].sum()),
            "tasks": len(per_task), "tasks_solved": len(solved), "tasks_unsolved": int((per_task.configs_solving == 0)
                                                                                     .sum()),
            "tasks_solved_by_at_most_two": int((solved["configs_solving"] <= 2).sum())}


def composition_gap(o: pd.DataFrame, threshold: float = 0.8) -> dict[str, Any]:
    """Outcomes with modeling and execution >= threshold: how many are full, and the validation score of
    those that are not (seed 001 §4.2: partial progress rarely composes into a full reproduction)."""
    c = _counted(o)
    high = c[(c["modeling_score"] >= threshold) & (c["execution_score"] >= threshold)]
    gap = high[~high["is_full"]]
    return {"threshold": threshold, "high": len(high), "full": int(high["is_full"].sum()),
            "full_share": 100 * high["is_full"].mean() if len(high) else float("nan"), "not_full": len(gap),
            "not_full_mean_validation": 100 * gap["validation_score"].mean() if len(gap) else float("nan"),
            "high_mean_validation": 100 * high["validation_score"].mean() if len(high) else float("nan")}


def time_allocation(o: pd.DataFrame, workflow: pd.DataFrame, per_config: int | None = 50,
                    seed: int = 0) -> pd.DataFrame:
    """Mean share (%) of tool-mediated time per workflow stage and configuration, over at most
    ``per_config`` sampled trajectories each (seeded; seed 001 samples 50 per model)."""
    from .workflow import LABELS, STAGES

    if workflow.empty:
        return pd.DataFrame(columns=["config", "trajectories", *[LABELS[s] for s in (*STAGES, "uncoded")]])
    share = workflow.pivot_table(index=["run", "trial_id"], columns="stage", values="seconds", aggfunc="sum",
                                 fill_value=0.0)
    share = share.div(share.sum(axis=1), axis=0).reset_index()
    share = share.merge(o[["run", "trial_id", "config"]].dropna(), on=["run", "trial_id"])
    rows = []
    for cfg, g in share.groupby("config", sort=True):
        if per_config and len(g) > per_config:
            g = g.sample(per_config, random_state=seed)
        rows.append({"config": cfg, "trajectories": len(g),
                     **{LABELS[s]: 100 * (g[s].mean() if s in g else 0.0) for s in (*STAGES, "uncoded")}})
    return pd.DataFrame(rows)


def sota_summary(o: pd.DataFrame) -> pd.DataFrame:
    """For ``sota`` tasks, per configuration: surpass, match and reproduce (g >= -0.05, at least) rates and
    mean improvement g. An outcome
    without a valid result counts as g = -1, band ``below`` (seed 002's failure floor)."""
    s = _counted(o[o["scoring"] == "sota"]).copy()
    if s.empty:
        return pd.DataFrame(columns=["config", "outcomes", "surpass_rate", "match_rate", "at_least_match_rate",
                                     "reproduce_rate", "mean_g"])
    s["sota_band"] = s["sota_band"].fillna("below")
    s["sota_g"] = s["sota_g"].astype(float).fillna(-1.0)
    return (s.groupby("config").apply(lambda g: pd.Series({
        "outcomes": len(g), "surpass_rate": 100 * (g.sota_band == "surpass").mean(),
        "match_rate": 100 * (g.sota_band == "match").mean(),
        "at_least_match_rate": 100 * g.sota_band.isin(["surpass", "match"]).mean(),
        "reproduce_rate": 100 * g.sota_band.isin(["surpass", "match", "reproduce"]).mean(), "mean_g": g.sota_g.mean()}),
        include_groups=False).reset_index().astype({"outcomes": int}))


def qa_summary(o: pd.DataFrame) -> pd.DataFrame:
    """For ``qa`` tasks, per configuration: mean open-ended rating and multiple-choice accuracy."""
    q = _counted(o[o["scoring"] == "qa"])
    if q.empty:
        return pd.DataFrame(columns=["config", "outcomes", "oeq_mean", "mcq_accuracy"])
    return (q.groupby("config").agg(outcomes=("task", "size"), oeq_mean=("qa_oeq", "mean"),
                                    mcq_accuracy=("qa_mcq_accuracy", lambda x: 100 * x.astype(float).mean()))
            .reset_index())


def pending(o: pd.DataFrame) -> pd.DataFrame:
    """Outcomes that are not final yet, per configuration and state (shown, never counted as 0)."""
    p = o[~o["state"].isin(["final", "refused"])]
    t = p.pivot_table(index="config", columns="state", values="task", aggfunc="count", fill_value=0)
    t.columns.name = None
    return t
