"""Figures of the report, each in two renderings: interactive plotly (JupyterLab, the HTML report) and
static matplotlib (``static=True``: a small report that renders anywhere, and the fallback when plotly is
not installed). Every function takes what :mod:`.metrics` returns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

STAGE_COLORS = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#B279A2", "#BAB0AC"]
# a figure's height grows with its rows but never below a readable plotting area: a first run has two
# configurations, and `120 + 28 × rows` once left 2 px to draw their bars in under the title and legend
CHROME_PX = 200  # title, axes, legend and plotly's margins
MIN_PLOT_PX = 240
MIN_INCHES = 3.2  # the same for matplotlib figures


def _height(rows: int, per_row: int) -> int:
    """Plotly figure height in px: the margins plus at least MIN_PLOT_PX to draw in."""
    return CHROME_PX + max(MIN_PLOT_PX, per_row * rows)


def _inches(rows: int, per_row: float, chrome: float = 1.2) -> float:
    return max(MIN_INCHES, chrome + per_row * rows)


def _plotly():
    try:
        import plotly.graph_objects as go

        return go
    except ImportError:
        return None


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# --- scores per configuration (Fig. 5c) ----------------------------------------------------------

def scores(table: pd.DataFrame, static: bool = False):
    """Partial score and full rate per configuration; the error bar reaches the upper bound (every leaf
    awaiting review passes)."""
    t = table.sort_values("partial")
    go = None if static else _plotly()
    if go:
        fig = go.Figure([go.Bar(y=t.config, x=t.partial, orientation="h", name="partial score",
                                error_x=dict(type="data", symmetric=False, array=t.partial_upper - t.partial,
                                             arrayminus=[0] * len(t))),
                         go.Bar(y=t.config, x=t.full_rate, orientation="h", name="full rate (R > 0.9)",
                                error_x=dict(type="data", symmetric=False, array=t.full_rate_upper - t.full_rate,
                                             arrayminus=[0] * len(t)))])
        return fig.update_layout(barmode="group", title="Partial score and full rate per configuration (%)",
                                 height=_height(len(t), 44), xaxis_title="%", legend_orientation="h")
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(8, _inches(len(t), 0.35)))
    y = np.arange(len(t))
    ax.barh(y + 0.2, t.partial, 0.4, xerr=[np.zeros(len(t)), t.partial_upper - t.partial], label="partial score")
    ax.barh(y - 0.2, t.full_rate, 0.4, xerr=[np.zeros(len(t)), t.full_rate_upper - t.full_rate],
            label="full rate (R > 0.9)")
    ax.set_yticks(y, t.config)
    ax.set_xlabel("%")
    ax.set_title("Partial score and full rate per configuration (%)")
    ax.legend(loc="lower right")
    return fig


# --- domain heatmap and difficulty (Fig. 5a, 5b) -------------------------------------------------

def heatmap(view: dict[str, Any], static: bool = False):
    heat: pd.DataFrame = view["heatmap"]
    go = None if static else _plotly()
    if go:
        fig = go.Figure(go.Heatmap(z=heat.values, x=list(heat.columns), y=list(heat.index), colorscale="RdYlGn",
                                   zmin=0, zmax=100, text=np.round(heat.values, 1), texttemplate="%{text}",
                                   colorbar_title="mean R %"))
        return fig.update_layout(title="Mean R (%) by configuration and field, hardest field first",
                                 height=_height(len(heat), 30), yaxis_autorange="reversed", xaxis_tickangle=-35)
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(max(6.0, 1.5 + 0.8 * heat.shape[1]), _inches(heat.shape[0], 0.4, 1.5)))
    im = ax.imshow(heat.values, cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(heat.shape[1]), heat.columns, rotation=35, ha="right")
    ax.set_yticks(range(heat.shape[0]), heat.index)
    for (i, j), v in np.ndenumerate(heat.values):
        if not np.isnan(v):
            ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, label="mean R %")
    ax.set_title("Mean R (%) by configuration and field, hardest field first")
    return fig


def difficulty(view: dict[str, Any], static: bool = False):
    d: pd.Series = view["difficulty"].sort_values()
    go = None if static else _plotly()
    if go:
        fig = go.Figure(go.Bar(x=d.values, y=list(d.index), orientation="h", marker_color="#E45756"))
        return fig.update_layout(title="Field difficulty (100 − mean R across configurations)",
                                 height=_height(len(d), 26), xaxis_range=[0, 100])
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7, _inches(len(d), 0.3)))
    ax.barh(list(d.index), d.values, color="#E45756")
    ax.set_xlim(0, 100)
    ax.set_title("Field difficulty (100 − mean R across configurations)")
    return fig


# --- phase distributions (Fig. 6a) ---------------------------------------------------------------

PHASE_SHARES_TITLE = "Share of each phase's weight earned over outcomes (%): IQR (thick), 10th–90th percentile (thin)"


SMALL_N = 5  # below this many outcomes a distribution is drawn as its points' summary only: no bands


def phase_shares(dist: pd.DataFrame, static: bool = False):
    """Each phase's share: median and mean, the IQR and 10th-90th percentile bands where there are at least
    :data:`SMALL_N` outcomes (percentiles of two outcomes say nothing), the mean's interval over tasks."""
    dist = dist.copy()
    few = dist["n"] < SMALL_N
    for col in ("p10", "q25", "q75", "p90"):
        dist.loc[few, col] = np.nan
    go = None if static else _plotly()
    if go:
        fig = go.Figure()
        for _, r in dist.iterrows():
            if pd.isna(r.p10):
                continue
            fig.add_trace(go.Scatter(x=[r.p10, r.p90], y=[r.phase] * 2, mode="lines", line_width=2,
                                     line_color="#888", showlegend=False, hoverinfo="skip"))
            fig.add_trace(go.Scatter(x=[r.q25, r.q75], y=[r.phase] * 2, mode="lines", line_width=10,
                                     line_color="#4C78A8", showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=dist["median"], y=dist.phase, mode="markers", name="median",
                                 marker=dict(symbol="circle", size=12, color="white", line_width=2)))
        ci = dist.get("ci_high", dist["mean"]) - dist["mean"], dist["mean"] - dist.get("ci_low", dist["mean"])
        fig.add_trace(go.Scatter(x=dist["mean"], y=dist.phase, mode="markers", name="mean (95 % CI over tasks)",
                                 marker=dict(symbol="diamond", size=11, color="#F58518"),
                                 error_x=dict(type="data", symmetric=False, array=ci[0].fillna(0),
                                              arrayminus=ci[1].fillna(0))))
        return fig.update_layout(title=PHASE_SHARES_TITLE,
                                 xaxis_range=[0, 100], height=_height(3, 0), yaxis_autorange="reversed")
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(8, MIN_INCHES))
    y = np.arange(len(dist))[::-1]
    ax.hlines(y, dist.p10, dist.p90, color="#888", lw=1.5)
    ax.hlines(y, dist.q25, dist.q75, color="#4C78A8", lw=8)
    ax.scatter(dist["median"], y, s=70, facecolor="white", edgecolor="k", zorder=3, label="median")
    ax.scatter(dist["mean"], y, marker="D", s=50, color="#F58518", zorder=4, label="mean")
    ax.set_yticks(y, dist.phase)
    ax.set_xlim(0, 100)
    ax.legend(loc="lower right")
    ax.set_title(PHASE_SHARES_TITLE)
    return fig


# --- turns vs score (Fig. 6b) --------------------------------------------------------------------

def turns(tv: dict[str, Any], static: bool = False):
    p = tv["points"].dropna(subset=["turns_trimmed"])
    r = "n/a (fewer than 3 configurations)" if np.isnan(tv["r"]) else f"{tv['r']:.2f}"
    title = f"Partial score vs trimmed-mean turns (Pearson r = {r})"
    go = None if static else _plotly()
    if go:
        fig = go.Figure(go.Scatter(x=p.turns_trimmed, y=p.partial, mode="markers+text", text=p.config,
                                   textposition="top center", marker_size=11))
        return fig.update_layout(title=title, xaxis_title="trimmed-mean turns", yaxis_title="partial score %",
                                 height=420, xaxis_range=_turns_range(p), yaxis_range=[0, 105])
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.scatter(p.turns_trimmed, p.partial)
    for _, r in p.iterrows():
        ax.annotate(r.config, (r.turns_trimmed, r.partial), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlim(*_turns_range(p))
    ax.set_ylim(0, 105)
    ax.set_xlabel("trimmed-mean turns")
    ax.set_ylabel("partial score %")
    ax.set_title(title)
    return fig


def _turns_range(p: pd.DataFrame) -> list[float]:
    """Turns are counts: the axis starts at 0 and reaches past the largest (1 when every count is 0)."""
    top = float(p.turns_trimmed.max()) if len(p) else 0.0
    return [0.0, max(1.0, 1.1 * top)]


# --- time allocation (Fig. 6c) -------------------------------------------------------------------

def allocation(alloc: pd.DataFrame, static: bool = False):
    stages = [c for c in alloc.columns if c not in ("config", "trajectories")]
    go = None if static else _plotly()
    if go:
        fig = go.Figure([go.Bar(y=alloc.config, x=alloc[s], name=s, orientation="h", marker_color=c)
                         for s, c in zip(stages, STAGE_COLORS, strict=False)])
        return fig.update_layout(barmode="stack", title="Tool-mediated time by activity (%)",
                                 height=_height(len(alloc), 28), xaxis_range=[0, 100], legend_orientation="h",
                                 legend_traceorder="normal")
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(8, _inches(len(alloc), 0.35)))
    left = np.zeros(len(alloc))
    for s, c in zip(stages, STAGE_COLORS, strict=False):
        ax.barh(alloc.config, alloc[s], left=left, label=s, color=c)
        left += alloc[s].to_numpy()
    ax.set_xlim(0, 100)
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    ax.set_title("Tool-mediated time by activity (%)")
    return fig


# --- how many configurations solve each task -----------------------------------------------------

def solved(sba: dict[str, Any], static: bool = False):
    per = sba["per_task"]["configs_solving"]
    counts = per.value_counts().reindex(range(int(per.max()) + 1 if len(per) else 1), fill_value=0)
    title = (f"Tasks by number of configurations with a full reproduction "
             f"({sba['full_outcomes']} full of {sba['outcomes']} outcomes)")
    go = None if static else _plotly()
    if go:
        fig = go.Figure(go.Bar(x=counts.index.astype(str), y=counts.values, marker_color="#54A24B"))
        return fig.update_layout(title=title, xaxis_title="configurations solving the task",
                                 yaxis_title="tasks", height=360)
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7, 3.4))
    ax.bar(counts.index.astype(str), counts.values, color="#54A24B")
    ax.set_xlabel("configurations solving the task")
    ax.set_ylabel("tasks")
    ax.set_title(title, fontsize=9)
    return fig


def show(fig) -> None:
    """Display a figure from this module in a notebook: plotly as is; matplotlib as an embedded PNG
    whose alt text is the figure's title (screen readers, and the HTML export keeps it)."""
    import base64
    import html
    import io

    from IPython.display import HTML, display

    if not hasattr(fig, "savefig"):
        fig.show()
        return
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    alt = html.escape(next((ax.get_title() for ax in fig.axes if ax.get_title()), "figure"), quote=True)
    display(HTML(f"<img alt=\"{alt}\" style=\"max-width:100%\" "
                 f"src=\"data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}\"/>"))
    _mpl().close(fig)
