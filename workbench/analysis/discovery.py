"""The report's discovery section: what each discovery run (`workbench discover`) found, for what it cost.

Read from the run directories (discovery.json, each session's attempts.jsonl) and the task each names
(its hidden discovery spec: the published value, the initial code's):

- :func:`load`: one row per run, and one row per scored submission (time since the run started, valid or
  not, the metric, the best so far in the task's direction);
- :func:`summary`: per run, the final best (the clean replay's metric) against the published value and the
  initial code, the rate of valid submissions, the improvements of the best, cost per improvement;
- :func:`progress`: the best so far against time or cost, one line per run, coloured by configuration,
  the published record dashed (one figure per task);
- :func:`section`: all of it displayed, for the report's notebooks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..discovery.records import DiscoveryState, find_runs, read_state, scored_attempts
from ..task import load_task


def config_label(state: DiscoveryState) -> str:
    """A run's configuration: its agent (and model), and the proposer's where it differs."""
    def one(c) -> str:
        return c.name + (f" ({c.model})" if c.model and c.model not in c.name else "")

    same = state.propose_agent.model_dump() == state.agent.model_dump()
    return one(state.agent) if same else f"{one(state.agent)}; propose: {one(state.propose_agent)}"


def _seconds(at: pd.Series, start: pd.Timestamp) -> pd.Series:
    return (pd.to_datetime(at, utc=True, format="ISO8601") - start).dt.total_seconds()


def load(root: Path | str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, submissions, sessions) of every discovery run at ``root`` or one level below it."""
    runs, subs, sessions = [], [], []
    for name, out in find_runs(Path(root)).items():
        state = read_state(out)
        spec = load_task(state.task).discovery_spec
        sign = spec.sign
        times = [a.at for _, a in scored_attempts(out, state)] + [s.started_at for s in state.sessions if s.started_at]
        start = pd.Timestamp(state.started_at or min(times, default="1970-01-01T00:00:00+00:00"))
        if start.tzinfo is None:
            start = start.tz_localize("UTC")
        final = state.final or {}
        runs.append({"run": name, "config": config_label(state), "task": Path(state.task).name, "metric": spec.metric,
                     "direction": spec.direction, "published": spec.published.value,
                     "published_source": spec.published.source, "initial": spec.initial,
                     "final": final.get("metric") if final.get("valid") else None, "final_R": final.get("R"),
                     "status": final.get("status", "running"), "stopped": state.stopped, "sign": sign,
                     "cost_usd": sum(s.cost_usd for s in state.sessions if s.cost_usd is not None)
                     if any(s.cost_usd is not None for s in state.sessions) else np.nan})
        best = None
        rows = []
        for rec, a in scored_attempts(out, state):
            d = a.discovery or {}
            valid = d.get("valid") is True and isinstance(d.get("metric"), int | float)
            rows.append({"run": name, "session": rec.id, "round": rec.round, "at": a.at, "valid": valid,
                         "value": float(d["metric"]) if valid else np.nan})
        rows.sort(key=lambda r: pd.Timestamp(r["at"]))
        for r in rows:
            improved = r["valid"] and (best is None or sign * (r["value"] - best) > 0)
            best = r["value"] if improved else best
            r.update(best=best if best is not None else np.nan, improved=bool(improved))
        subs += rows
        sessions += [{"run": name, "session": s.id, "phase": s.phase, "ended": s.ended_at, "cost_usd": s.cost_usd}
                     for s in state.sessions if s.ended_at]
        runs[-1]["start"] = start
    runs_df = pd.DataFrame(runs)
    subs_df, sessions_df = pd.DataFrame(subs), pd.DataFrame(sessions)
    for df in (subs_df, sessions_df):
        if len(df):
            col = "at" if "at" in df else "ended"
            starts = df["run"].map(runs_df.set_index("run")["start"])
            df["minutes"] = [(pd.Timestamp(t) - s).total_seconds() / 60 for t, s in zip(df[col], starts, strict=True)]
    return runs_df, subs_df, sessions_df


def summary(runs: pd.DataFrame, subs: pd.DataFrame, sessions: pd.DataFrame) -> pd.DataFrame:
    """Per run: the final best (replayed) against the published value, valid rate, improvements, cost, and
    the minutes to the best and in all."""
    rows = []
    for r in runs.itertuples():
        s = subs[subs["run"] == r.run] if len(subs) else subs
        ses = sessions[sessions["run"] == r.run] if len(sessions) else sessions
        n = len(s)
        valid = int(s["valid"].sum()) if n else 0
        improvements = int(s["improved"].sum()) if n else 0
        gap = None if r.final is None or pd.isna(r.final) else r.sign * (r.final - r.published) / abs(r.published)
        rows.append({"configuration": r.config, "run": r.run, "task": r.task,
                     "final best": r.final, "published": r.published, "initial": r.initial,
                     "vs published %": None if gap is None else 100 * gap,
                     "beats published": None if gap is None else bool(gap > 0),
                     "submissions": n, "valid %": 100 * valid / n if n else None, "improvements": improvements,
                     "cost $": None if pd.isna(r.cost_usd) else r.cost_usd,
                     "$ per improvement": r.cost_usd / improvements if improvements and not pd.isna(r.cost_usd)
                     else None,
                     "minutes to the best": float(s[s["improved"]]["minutes"].max()) if improvements else None,
                     "minutes": float(ses["minutes"].max()) if len(ses) else None,
                     "status": r.stopped or r.status})
    return pd.DataFrame(rows)


def cost_steps(runs: pd.DataFrame, subs: pd.DataFrame, sessions: pd.DataFrame) -> pd.DataFrame:
    """The best so far at each session's end against the cost spent by then (runs whose sessions report a
    cost; a CLI agent reports none)."""
    rows = []
    for r in runs.itertuples():
        ses = sessions[(sessions["run"] == r.run)].sort_values("minutes") if len(sessions) else sessions
        if not len(ses) or ses["cost_usd"].isna().all():
            continue
        s = subs[subs["run"] == r.run] if len(subs) else subs
        spent = 0.0
        for e in ses.itertuples():
            spent += 0.0 if pd.isna(e.cost_usd) else float(e.cost_usd)
            done = s[s["minutes"] <= e.minutes] if len(s) else s
            best = done["best"].dropna()
            rows.append({"run": r.run, "config": r.config, "task": r.task, "cost_usd": spent,
                         "best": float(best.iloc[-1]) if len(best) else np.nan})
    return pd.DataFrame(rows)


def progress(runs: pd.DataFrame, points: pd.DataFrame, x: str, static: bool = False) -> list:
    """The best so far against ``x`` (``minutes`` or ``cost_usd``), one line per run coloured by configuration,
    the published record dashed; one figure per task."""
    from .plots import STAGE_COLORS, _mpl, _plotly

    label = {"minutes": "minutes since the run started", "cost_usd": "cost so far ($)"}[x]
    colors = {c: STAGE_COLORS[i % len(STAGE_COLORS)] for i, c in enumerate(sorted(runs["config"].unique()))}
    figs = []
    for task, rs in runs.groupby("task"):
        title = f"{task}: best {rs['metric'].iloc[0]} so far ({rs['direction'].iloc[0]})"
        published = float(rs["published"].iloc[0])
        go = None if static else _plotly()
        fig = go.Figure() if go else None
        if fig is None:
            plt = _mpl()
            mfig, ax = plt.subplots(figsize=(8, 3.6))
        for r in rs.itertuples():
            p = points[(points["run"] == r.run)].dropna(subset=["best"]) if len(points) else points
            if not len(p):
                continue
            name = f"{r.config} ({r.run})"
            if fig is not None:
                fig.add_trace(go.Scatter(x=p[x], y=p["best"], mode="lines+markers", line_shape="hv", name=name,
                                         line_color=colors[r.config]))
            else:
                ax.step(p[x], p["best"], where="post", marker="o", ms=3, label=name, color=colors[r.config])
        if fig is not None:
            fig.add_hline(y=published, line_dash="dash", line_color="#777",
                          annotation_text=f"published {published:g}")
            figs.append(fig.update_layout(title=title, xaxis_title=label, yaxis_title=rs["metric"].iloc[0],
                                          height=380, legend_orientation="h"))
        else:
            ax.axhline(published, ls="--", color="#777", label=f"published {published:g}")
            ax.set(title=title, xlabel=label, ylabel=rs["metric"].iloc[0])
            ax.legend(fontsize=8)
            figs.append(mfig)
    return figs


def records(table: pd.DataFrame | None) -> list[dict]:
    """The summary as JSON-ready rows (missing values None), for scrapbook."""
    if table is None:
        return []
    return [{k: (None if not isinstance(v, str | bool) and pd.isna(v) else v) for k, v in row.items()}
            for row in table.to_dict("records")]


def section(root: Path | str, static: bool = False) -> pd.DataFrame | None:
    """Display the discovery section for the runs under ``root``; returns the summary (None: no runs)."""
    from IPython.display import HTML, Markdown, display

    from .plots import show
    from .report import fmt_table

    runs, subs, sessions = load(root)
    if not len(runs):
        display(Markdown("*No discovery runs.*"))
        return None
    table = summary(runs, subs, sessions)
    display(HTML(fmt_table(table, digits=6)))
    sources = runs.drop_duplicates("task")
    display(Markdown("Published values: " + "; ".join(
        f"{t.task}: {t.published:g} ({t.published_source})" for t in sources.itertuples()) + "."))
    for fig in progress(runs, subs, "minutes", static):
        show(fig)
    costs = cost_steps(runs, subs, sessions)
    if len(costs):
        for fig in progress(runs, costs, "cost_usd", static):
            show(fig)
    else:
        display(Markdown("*No session of these runs reports a cost (CLI agents report none), so there is no "
                         "best-so-far-against-cost figure.*"))
    return table
