"""The paper's aggregate metrics (PaperBenchX Table 2, Figures 5 and 6) over an outcomes frame.

Every function takes the frame from :func:`.frames.outcomes` and returns a DataFrame or a dict;
percentages are 0-100. Withheld outcomes (``infra_error`` and ``withheld``: the workbench or the judge
failed) are left out of every mean, rate and distribution, counted where a table reports its outcomes,
and listed by :func:`withheld`. Provisional outcomes count their R so far and carry upper bounds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .frames import PHASE_SHARES, WITHHELD_STATES, ZERO_STATES, _true, sample_per_config
from .uncertainty import cluster_ci

TRIM = 0.10  # trimmed mean: drop this share of outcomes at each end
SHARE_OF_PHASE = {f"{p}_share": p for p in ("modeling", "execution", "validation")}  # index column -> phase


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


PEOPLE = frozenset({"human"})  # agents that are people (agents.human): reports mark them


def who(g: pd.DataFrame) -> str:
    """``person`` for a configuration whose agent is a person (a human baseline, a student), else ``agent``."""
    return "person" if "agent" in g and g["agent"].isin(PEOPLE).any() else "agent"


def _counted(o: pd.DataFrame) -> pd.DataFrame:
    return o[~o["state"].isin(WITHHELD_STATES)]


def _rate(flags: pd.Series) -> float:
    """Percentage of True among the flags (nullable booleans from :func:`.frames.outcomes`)."""
    return 100 * flags.astype(float).mean() if len(flags) else float("nan")


def _ci(values, clusters, scale: float = 100.0) -> dict[str, float]:
    low, high = cluster_ci(values, clusters)
    return {"low": scale * low, "high": scale * high}


def model_table(o: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: partial score and full rate with their upper bounds (every leaf awaiting review
    passes) and their 95 % intervals over tasks (:mod:`.uncertainty`; ``tasks``: how many are behind
    them), refusal rate, phase scores, turns, hours, tokens, cost, and how many outcomes are
    provisional, missing or withheld. Scores count withheld outcomes nowhere; the session columns
    (refusal, turns, hours, tokens, cost) cover every completed session, withheld or not: the
    session happened, only its scoring failed."""
    rows = []
    for cfg, g in o.groupby("config", sort=True):
        c = _counted(g)
        ran = g[g["status"].isin(["complete"])]
        partial_ci = _ci(c["score"], c["task"])
        full_ci = _ci(c["is_full"].astype(float), c["task"])
        rows.append({
            "config": cfg, "who": who(g),
            "model": g["model"].dropna().iloc[0] if g["model"].notna().any() else None, "outcomes": len(g),
            "tasks": int(c.dropna(subset=["score"])["task"].nunique()),
            "partial": 100 * c["score"].mean(), "partial_upper": 100 * c["R_upper"].mean(),
            "partial_ci_low": partial_ci["low"], "partial_ci_high": partial_ci["high"],
            "full_rate": _rate(c["is_full"]), "full_rate_upper": _rate(c["full_upper"]),
            "full_rate_ci_low": full_ci["low"], "full_rate_ci_high": full_ci["high"],
            "refusal_rate": 100 * ran["refused"].map(_true).mean() if len(ran) else np.nan,
            **{p: 100 * c[p].mean() for p in PHASE_SHARES},
            "turns": ran["turns"].astype(float).mean(), "turns_trimmed": trimmed_mean(ran["turns"]),
            "hours": ran["hours"].mean(), "tokens": ran["tokens"].mean(),
            "cost_usd": ran["agent_cost_usd"].astype(float).mean(),
            "cost_usd_total": ran["agent_cost_usd"].astype(float).sum(min_count=1),
            "provisional": int((g["state"] == "provisional").sum()), "refused_no_fallback": int(
                (g["state"] == "refused").sum()), "missing": int(g["state"].isin(["missing", "unfinished"]).sum()),
            "infra_error": int((g["state"] == "infra_error").sum()),
            "needs_rescoring": int((g["state"] == "needs_rescoring").sum()),
            "withheld": int(g["state"].isin(WITHHELD_STATES).sum()),
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


def phase_share_distributions(o: pd.DataFrame) -> pd.DataFrame:
    """Per phase over outcomes: n, mean with its 95 % interval over tasks, median, IQR and the 10th-90th
    percentile range (in %)."""
    c = _counted(o)
    rows = []
    for col, phase in SHARE_OF_PHASE.items():
        v = 100 * c[col].dropna().astype(float)
        ci = _ci(v, c.loc[v.index, "task"], scale=1.0)
        q = v.quantile([0.10, 0.25, 0.50, 0.75, 0.90]) if len(v) else pd.Series([np.nan] * 5,
                                                                                 index=[.1, .25, .5, .75, .9])
        rows.append({"phase": phase, "n": len(v), "mean": v.mean(), "ci_low": ci["low"], "ci_high": ci["high"],
                     "median": q[0.50], "q25": q[0.25],
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
    those that are not (PaperBenchX §4.2: partial progress rarely composes into a full reproduction)."""
    c = _counted(o)
    high = c[(c["modeling_share"] >= threshold) & (c["execution_share"] >= threshold)]
    gap = high[~high["is_full"]]
    return {"threshold": threshold, "high": len(high), "full": int(high["is_full"].sum()),
            "full_share": _rate(high["is_full"]), "not_full": len(gap),
            "not_full_mean_validation": 100 * gap["validation_share"].mean() if len(gap) else float("nan"),
            "high_mean_validation": 100 * high["validation_share"].mean() if len(high) else float("nan")}


def time_allocation(o: pd.DataFrame, activity: pd.DataFrame, per_config: int | None = 50,
                    seed: int = 0) -> pd.DataFrame:
    """Mean share (%) of tool-mediated time per activity and configuration, over at most
    ``per_config`` sampled trajectories each (seeded; PaperBenchX samples 50 per model). ``activity`` may be
    every trial's rows or just the sampled ones (:func:`.frames.activity_sample`): the same draw."""
    from ..trajectory.activities import ACTIVITIES, LABELS

    if activity.empty:
        return pd.DataFrame(columns=["config", "trajectories", *[LABELS[s] for s in (*ACTIVITIES, "uncoded")]])
    share = activity.pivot_table(index=["run", "trial_id"], columns="activity", values="seconds", aggfunc="sum",
                                 fill_value=0.0)
    share = share.div(share.sum(axis=1), axis=0).reset_index()
    share = share.merge(o[["run", "trial_id", "config"]].dropna(), on=["run", "trial_id"])
    rows = []
    for cfg, g in sample_per_config(share, per_config, seed).groupby("config", sort=True):
        rows.append({"config": cfg, "trajectories": len(g),
                     **{LABELS[s]: 100 * (g[s].mean() if s in g else 0.0) for s in (*ACTIVITIES, "uncoded")}})
    return pd.DataFrame(rows)


# where a trial's time goes (index columns): stage seconds (trial.json) and scoring's split (scores.json's timing)
TRIAL_TIME = {"session_seconds": "session", "replay_seconds": "replay", "score_seconds": "scoring",
              "score_checks_seconds": "checks", "score_judge_seconds": "judge", "score_other_seconds": "other",
              "review_seconds": "review", "judge_calls": "judge calls"}


def time_per_stage(o: pd.DataFrame) -> pd.DataFrame:
    """Per configuration, where a trial's time goes: the median seconds of each stage (session: the agent
    at work; replay; scoring; review), of scoring's deterministic checks, judge and the rest as scores.json
    splits them (the scoring stage also holds what the engine adds: a kernel, loading the task), and the
    median judge calls; where any configuration is a person, a ``who`` column says which (their session time
    is a person's, beside the agents'). Every trial counts, withheld ones too (their time was spent); a trial that never
    reached a stage, or was scored before timings were kept, is left out of that column's median, never
    counted as 0."""
    t = o[o["trial_id"].notna()] if "trial_id" in o else o.iloc[:0]
    t = t.assign(**{c: np.nan for c in TRIAL_TIME if c not in t})
    rows = [{"config": cfg, "who": who(g), "trials": len(g),
             **{label: g[c].astype(float).median() for c, label in TRIAL_TIME.items()}}
            for cfg, g in t.groupby("config", sort=True)]
    frame = pd.DataFrame(rows, columns=["config", "who", "trials", *TRIAL_TIME.values()])
    return frame if (frame["who"] == "person").any() else frame.drop(columns="who")


SOTA_COLUMNS = ["config", "outcomes", "surpass_rate", "surpass_ci_low", "surpass_ci_high", "match_rate",
                "at_least_match_rate", "reproduce_rate", "mean_g", "g_ci_low", "g_ci_high", "withheld"]


def sota_summary(o: pd.DataFrame) -> pd.DataFrame:
    """For ``sota`` tasks, per configuration: surpass, match and reproduce (g >= -0.05, at least) rates and
    mean improvement g over the counted outcomes, and how many were withheld. A counted outcome without a
    valid result (missing, refused, or g = -1 from the scorer) is g = -1, band ``below`` (NatureBench's
    failure floor); a withheld evaluator result is the workbench's failure, so it counts nowhere. The surpass
    rate and mean g carry their 95 % intervals over tasks."""
    s = o[o["scoring"] == "sota"]
    rows = []
    for cfg, g in s.groupby("config", sort=True):
        c = _counted(g)
        floor = c["state"].isin(ZERO_STATES)
        band = c["sota_band"].mask(floor).fillna("below")
        gain = c["sota_g"].astype(float).mask(floor).fillna(-1.0)
        surpass_ci, g_ci = _ci((band == "surpass").astype(float), c["task"]), _ci(gain, c["task"], scale=1.0)
        rows.append({"config": cfg, "outcomes": len(c), "surpass_rate": _rate(band == "surpass"),
                     "surpass_ci_low": surpass_ci["low"], "surpass_ci_high": surpass_ci["high"],
                     "g_ci_low": g_ci["low"], "g_ci_high": g_ci["high"],
                     "match_rate": _rate(band == "match"),
                     "at_least_match_rate": _rate(band.isin(["surpass", "match"])),
                     "reproduce_rate": _rate(band.isin(["surpass", "match", "reproduce"])),
                     "mean_g": gain.mean() if len(c) else float("nan"), "withheld": len(g) - len(c)})
    return pd.DataFrame(rows, columns=SOTA_COLUMNS)


def qa_summary(o: pd.DataFrame) -> pd.DataFrame:
    """For ``qa`` tasks, per configuration: mean open-ended rating and multiple-choice accuracy over the
    counted outcomes, and how many were withheld."""
    q = o[o["scoring"] == "qa"]
    rows = []
    for cfg, g in q.groupby("config", sort=True):
        c = _counted(g)
        rows.append({"config": cfg, "outcomes": len(c), "oeq_mean": c["qa_oeq"].astype(float).mean(),
                     "mcq_accuracy": 100 * c["qa_mcq_accuracy"].astype(float).mean(), "withheld": len(g) - len(c)})
    return pd.DataFrame(rows, columns=["config", "outcomes", "oeq_mean", "mcq_accuracy", "withheld"])


def withheld(o: pd.DataFrame) -> pd.DataFrame:
    """Every withheld outcome, where it is and why: what must be rerun (infrastructure errors) or rescored
    (a withheld leaf or evaluator result) before the numbers cover it."""
    w = o[o["state"].isin(WITHHELD_STATES)]
    error = w["error"].fillna("(no message)").astype(str)
    why = np.where(w["state"] == "infra_error", "infrastructure error: " + error,
                   "needs rescoring: a leaf or the evaluator was withheld (judge or workbench failure)")
    return (pd.DataFrame({"config": w["config"], "task": w["task"], "attempt": w["attempt"], "run": w["run"],
                          "trial": w["trial_id"], "reason": why})
            .sort_values(["config", "task", "attempt"], ignore_index=True))


def not_final(o: pd.DataFrame) -> pd.DataFrame:
    """Outcomes that are not final, per configuration and state: provisional (counted with bounds),
    withheld and infrastructure errors (not counted), missing and unfinished (counted 0)."""
    p = o[~o["state"].isin(["final", "refused"])]
    t = p.pivot_table(index="config", columns="state", values="task", aggfunc="count", fill_value=0)
    t.columns.name = None
    return t
