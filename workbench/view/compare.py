"""Comparing in `workbench view`: a run's task × configuration grid, and two trials of one task side by side.

The grid is what Harbor's viewer does for jobs: per (task, configuration) the mean R over the attempts with
its 95 % interval (bootstrap over attempts, none below three), the full rate, n and the cost; each cell
opens the comparison. The comparison puts two trials of the same task leaf by leaf (score, status, and the
evidence each leaf was scored on, linked into each trial), the rows where they differ marked; two selectors
switch either side to any trial of the task (another attempt or another configuration).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from ..paths import RunPaths, TrialPaths
from .frame import cost, e, num, page, q, trial_url
from .summary import find_trial, shown_scores


@lru_cache(maxsize=4096)
def _interval(values: tuple[float, ...]) -> tuple[float, float]:
    from ..analysis.uncertainty import cluster_ci

    return cluster_ci(values, range(len(values)))  # each attempt its own cluster


def grid(run: dict[str, Any]) -> str:
    """The task × configuration grid of a run summary (:func:`.summary.run_summary`)."""
    trials = [t for t in run["trials"] if t.get("task") and t.get("config")]
    tasks, configs = sorted({t["task"] for t in trials}), sorted({t["config"] for t in trials})
    if len(trials) < 2:
        return ""
    head = "".join(f"<th>{e(c)}</th>" for c in configs)
    rows = []
    for task in tasks:
        cells = []
        for config in configs:
            mine = [t for t in trials if t["task"] == task and t["config"] == config]
            scored = [t for t in mine if t.get("R") is not None]
            if not mine:
                cells.append("<td class='muted'>–</td>")
                continue
            url = f"/run/{q(run['name'])}/compare?{urlencode({'task': task, 'config': config})}"
            if scored:
                rs = tuple(float(t["R"]) for t in scored)
                low, high = _interval(rs)
                mean = sum(rs) / len(rs)
                full = sum(1 for t in scored if t.get("full")) / len(scored)
                spent = sum(t.get("cost_usd") or 0.0 for t in mine) or None
                ci = "" if low != low else f" <span class='muted'>[{low:.2f}, {high:.2f}]</span>"
                text = (f"R {mean:.3f}{ci}<br><span class='muted'>full {full:.0%} · n {len(scored)} · "
                        f"{cost(spent)}</span>")
            else:
                text = f"<span class='muted'>n 0 of {len(mine)}</span>"
            cells.append(f"<td class='cell' data-task='{e(task)}' data-config='{e(config)}'>"
                         f"<a href='{e(url)}'>{text}</a></td>")
        rows.append(f"<tr><th>{e(task)}</th>{''.join(cells)}</tr>")
    return (f"<table class='grid'><tr><th>task \\ configuration</th>{head}</tr>{''.join(rows)}</table>"
            "<p class='muted'>Each cell: mean R over its scored attempts with the 95 % interval over attempts "
            "(from three attempts), full rate, n and cost; open one to compare its trials leaf by leaf.</p>")


def pick(run: RunPaths, query: dict[str, list[str]]) -> tuple[TrialPaths | None, TrialPaths | None, list[str]]:
    """The two trials a comparison shows (``a=T&b=T``, or a grid cell's ``task=&config=``: its first two
    attempts, or its one attempt beside the best trial of the task in another configuration), and every
    trial of that task to switch to."""
    from .summary import trial_summary

    first = (query.get("a") or [None])[0]
    a = find_trial(run, first) if first else None
    summaries = [trial_summary(run, d.name) for d in sorted(run.trials.iterdir()) if d.is_dir()] \
        if run.trials.is_dir() else []
    task = (query.get("task") or [None])[0]
    if a is not None:
        task = next((s.get("task") for s in summaries if s["id"] == a.root.name), task)
    same = [s for s in summaries if s.get("task") == task]
    if a is None:
        config = (query.get("config") or [None])[0]
        cell = sorted((s for s in same if s.get("config") == config), key=lambda s: s.get("attempt") or 0)
        if not cell:
            return None, None, []
        a = find_trial(run, cell[0]["id"])
        others = [s for s in same if s.get("config") != config and s.get("R") is not None]
        second = cell[1]["id"] if len(cell) > 1 else max(others, key=lambda s: s["R"])["id"] if others else None
        b = find_trial(run, second) if second else a
    else:
        second = (query.get("b") or [None])[0]
        b = find_trial(run, second) if second else a
    return a, b, [s["id"] for s in same]


def _refs(run: str, tp: TrialPaths, refs: list[str]) -> str:
    base = trial_url(run, tp.root.name)
    return " ".join(f"<a class='mono' href='{base}/file/evidence/{'/'.join(q(p) for p in r.split('/'))}' "
                    f"target='_blank'>{e(r)}</a>" for r in refs)


def compare_page(run: RunPaths, a: TrialPaths, b: TrialPaths, candidates: list[str], poll_seconds: float) -> str:
    """Two trials of one task, leaf by leaf."""
    name = run.root.name
    sa, sb = shown_scores(a), shown_scores(b)

    def chooser(side: str, current: TrialPaths) -> str:
        options = "".join(f"<option value='{e(t)}'{' selected' if t == current.root.name else ''}>{e(t)}</option>"
                          for t in candidates)
        return f"<select data-compare='{side}'>{options}</select>"

    def head(tp: TrialPaths, s) -> str:
        r = f"R {s.R:.4f} · coverage {s.coverage:.3f}" if s else "not scored"
        return f"<a href='{trial_url(name, tp.root.name)}'>{e(tp.root.name)}</a><br><span class='muted'>{r}</span>"

    leaves_a = {lf.id: lf for lf in sa.leaves} if sa else {}
    leaves_b = {lf.id: lf for lf in sb.leaves} if sb else {}
    rows = []
    for lid in [*leaves_a, *(k for k in leaves_b if k not in leaves_a)]:
        la, lb = leaves_a.get(lid), leaves_b.get(lid)
        ref = la or lb
        differs = (la.score if la else None) != (lb.score if lb else None)

        def side(lf, tp) -> str:
            if lf is None:
                return "<td class='muted'>–</td>"
            return (f"<td><b>{num(lf.score, 2)}</b> <span class='muted'>{e(lf.status)}</span><br>"
                    f"{_refs(name, tp, lf.evidence_refs)}</td>")

        rows.append(f"<tr class='leaf{' differs' if differs else ''}' data-leaf='{e(lid)}'><td><b>{e(lid)}</b> "
                    f"{e(ref.title or '')}</td><td>{e(ref.phase)}</td><td class='num'>{ref.effective_weight:.4f}</td>"
                    f"{side(la, a)}{side(lb, b)}</tr>")
    differ = sum(1 for r in rows if " differs'" in r)
    body = (f"<div class='crumbs'><a href='/'>runs</a> / {e(name)} / compare</div><h1>Side by side</h1>"
            f"<p>A: {chooser('a', a)} B: {chooser('b', b)} <span class='muted'>{differ} leaf(s) differ "
            f"(marked)</span></p><table class='compare'><tr><th>leaf</th><th>phase</th><th>weight</th>"
            f"<th>A: {head(a, sa)}</th><th>B: {head(b, sb)}</th></tr>{''.join(rows)}</table>")
    return page(f"compare · {name}", body, poll_seconds)

