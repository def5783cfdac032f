"""The HTML of `workbench view`: the run list and a trial's page, built from small templates.

Every string that comes from a run (trial ids, file names, rationales, logs, trajectory text) can be
the submission's, so it passes :func:`e` (HTML escaping) or :func:`q` (URL quoting) on its way in; the
page loads its script and style from the view itself (``/static/``), and the server forbids every
other script, so nothing a submission wrote can run here, and the page needs no network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ..evidence import read_links, read_manifest
from ..io import Walk
from ..paths import RunPaths, TrialPaths
from ..receipts import Receipts
from ..rubric.phases import PHASES
from ..trajectory import read_trajectory
from ..trial.record import read_trial
from .compare import grid
from .frame import STATUS_COLORS, cost, duration, e, num, page, q, status_badge, trial_url
from .live import log_tail, resume_command
from .summary import STATUSES, shown_scores, trial_summary

REPORT = "report.html"  # a run's report, where `workbench view` links it (workbench report RUN --out RUN/report.html)
MAX_TREE = 2000  # evidence entries listed
MAX_LISTED = 20 * MAX_TREE  # evidence entries read to order the tree
MAX_STEPS = 2000  # trajectory steps shown
MAX_PROCESSES = 300
TEXT_CHARS = 8000  # of one message or observation

# --- the run list --------------------------------------------------------------------------------

def _progress(run: dict[str, Any]) -> str:
    c, total = run["counts"], max(run["total"], 1)
    bar = "".join(f"<div title='{e(s)} {c[s]}' style='width:{100 * c[s] / total:.2f}%;"
                  f"background:{STATUS_COLORS[s]}'></div>" for s in STATUSES if c[s])
    words = " · ".join(f"{c[s]} {s}" for s in STATUSES if c[s]) or "no trials yet"
    return f"<div class='bar'>{bar}</div><div class='progress'>{run['total']} trial(s): {e(words)}</div>"


def run_section(run: dict[str, Any]) -> str:
    rows = []
    for t in run["trials"]:
        name = (f"<a href='{trial_url(run['name'], t['id'])}'>{e(t['id'])}</a>" if t["status"] != "queued"
                else f"<span class='muted'>{e(t['id'])}</span>")
        r = num(t.get("R"), 4)
        if t.get("R_upper") is not None and t.get("R") is not None and t["R_upper"] > t["R"]:
            r += f" <span class='muted'>[≤ {num(t['R_upper'], 4)}]</span>"
        rows.append(f"<tr class='trial' data-row data-trial='{e(t['id'])}' data-status='{e(t['status'])}'>"
                    f"<td>{name}</td><td>{e(t.get('task', ''))}</td>"
                    f"<td>{e(t.get('config', ''))}</td><td class='num' data-v='{_v(t.get('attempt'))}'>"
                    f"{e(t.get('attempt', ''))}</td><td>{status_badge(t['status'], t.get('stage'))}</td>"
                    f"<td class='num' data-v='{_v(t.get('R'))}'>{r}</td>"
                    f"<td class='num' data-v='{_v(t.get('coverage'))}'>{num(t.get('coverage'))}</td>"
                    f"<td class='num' data-v='{_v(t.get('tokens'))}'>{t.get('tokens') or '–'}</td>"
                    f"<td class='num' data-v='{_v(t.get('cost_usd'))}'>{cost(t.get('cost_usd'))}</td>"
                    f"<td class='num' data-v='{_v(t.get('seconds'))}'>{duration(t.get('seconds'))}</td></tr>")
    kind = "batch" if run["batch"] else "run"
    report = RunPaths(Path(run["path"])).root / REPORT
    report_link = (f"<a class='report' href='/run/{q(run['name'])}/report' target='_blank'>report</a>"
                   if report.is_file() else
                   f"report: <code>workbench report {e(run['path'])} --out {e(report)}</code>")
    head = (f"<h2 class='run' data-run='{e(run['name'])}'>{e(run['name'])} <span class='muted'>({kind}, "
            f"{e(run['path'])})</span></h2>{_progress(run)}"
            f"<div>mean R of scored trials {num(run['mean_R'], 4)} · tokens {run['tokens']} · "
            f"cost {cost(run['cost_usd'])} · time {duration(run['seconds'])}</div>"
            f"<div class='run-links muted'>{report_link} · in JupyterLab: <code>workbench lab {e(run['path'])}</code>"
            f"</div>")
    cols = ("trial", "task", "configuration", "attempt", "status", "R", "coverage", "tokens", "cost", "time")
    table = ("<table class='trials sortable'><tr>" + "".join(f"<th data-col='{i}' title='sort'>{c}</th>"
                                                          for i, c in enumerate(cols)) + "</tr>"
             + "".join(rows) + "</table>")
    return f"<section class='run-section'>{head}{grid(run)}{table}</section>"


def _v(x: Any) -> str:
    """A cell's value to sort by (numbers sort as numbers; a missing one last)."""
    return "" if x is None else e(x)


def runs_fragment(runs: list[dict[str, Any]], root: Path) -> str:
    if not runs:
        return f"<p class='muted'>No runs under {e(root)} yet (a run directory holds trials/).</p>"
    return "".join(run_section(r) for r in runs)


def runs_page(runs: list[dict[str, Any]], root: Path, poll_seconds: float) -> str:
    from .discovery import links

    statuses = "".join(f"<option value='{e(s)}'>{e(s)}</option>" for s in STATUSES)
    tools = ("<div class='tools'><input type='search' id='find' placeholder='search trials: task, configuration, "
             f"id …' size='40'> <select id='status-filter'><option value=''>any status</option>{statuses}</select> "
             "<span class='muted'>click a column to sort</span></div>")
    body = (f"<h1>Runs in {e(root)}</h1>{links(root)}{tools}"
            f"<div id='runs' data-poll='/fragment/runs'>{runs_fragment(runs, root)}</div>"
            f"<p class='muted'>Refreshes every {poll_seconds:g} s.</p>")
    return page("workbench view", body, poll_seconds)


# --- a trial -------------------------------------------------------------------------------------

def _kv(rows: list[tuple[str, str]], cls: str = "") -> str:
    return f"<table class='{cls}'>" + "".join(f"<tr><th>{e(k)}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def _value(v: Any, limit: int = 2000) -> str:
    if isinstance(v, dict | list):
        text = json.dumps(v, default=str)
        return f"<code>{e(text[:limit])}{'…' if len(text) > limit else ''}</code>"
    return e(v)


def _summary(run: RunPaths, tp: TrialPaths) -> str:
    t = trial_summary(run, tp.root.name)
    r = num(t.get("R"), 4) + (f" (upper bound {num(t['R_upper'], 4)})"
                              if t.get("R_upper") is not None and t.get("R") is not None and t["R_upper"] > t["R"]
                              else "")
    rows = [("task", e(t.get("task"))), ("configuration", e(f"{t.get('config')} (agent {t.get('agent')}"
                                                                + (f", model {t['model']}" if t.get("model") else "")
                                                                + ")")),
            ("attempt", e(t.get("attempt"))), ("status", status_badge(t["status"], t.get("stage"))),
            ("R", r), ("full", e(t.get("full"))), ("coverage", num(t.get("coverage"))),
            ("awaiting review", e(t.get("awaiting"))), ("tokens", e(t.get("tokens"))),
            ("cost", cost(t.get("cost_usd"))), ("time", duration(t.get("seconds")))]
    if t.get("error"):
        rows.append(("error", f"<span class='error'>{e(t['error'])}</span>"))
    rec = read_trial(tp)
    if t["status"] == "interrupted" and rec is not None:
        rows.append(("resume", f"<code class='resume'>{e(resume_command(run, rec))}</code>"))
    final = "" if t["status"] in ("running", "queued") else "<span data-final></span>"
    live = log_tail(tp, t.get("stage")) if t["status"] == "running" else ""
    return _kv(rows, "trial-summary") + live + final


def summary_fragment(run: RunPaths, tp: TrialPaths) -> str:
    return _summary(run, tp)


def _stages(tp: TrialPaths, base: str) -> str:
    rec = read_trial(tp)
    if rec is None:
        return ""
    rows = []
    for name, st in rec.stages.items():
        nb = Path(st.notebook).name if st.notebook else None
        link = (f"<a href='{base}/notebook/{q(nb)}' target='_blank'>{e(nb)}</a>"
                if nb and (tp.notebooks / nb).is_file() else "–")
        rows.append(f"<tr><td>{e(name)}</td><td>{e(st.status)}</td><td class='num'>{duration(st.seconds)}</td>"
                    f"<td>{link}</td><td class='error'>{e(st.error or '')}</td></tr>")
    return ("<table class='stages'><tr><th>stage</th><th>status</th><th>time</th><th>executed notebook</th>"
            "<th>error</th></tr>" + "".join(rows) + "</table>")


def review_link(review_url: str | None, run: str, tid: str, leaf: str) -> str:
    if not review_url:
        return ""
    sep = "&" if "?" in review_url else "?"
    href = f"{review_url}{sep}{urlencode({'run': run, 'trial': tid, 'leaf': leaf})}"
    return f"<a class='review-link' href='{e(href)}' target='_blank'>review</a>"


def _leaves(tp: TrialPaths, run: str, review_url: str | None) -> str:
    scores = shown_scores(tp)
    if scores is None:
        return "<p class='muted'>Not scored yet.</p>"
    out = []
    for phase in [*PHASES, *sorted({lf.phase for lf in scores.leaves} - set(PHASES))]:
        leaves = [lf for lf in scores.leaves if lf.phase == phase]
        if not leaves:
            continue
        earned, weight = scores.phases.get(phase, 0.0), scores.phase_weights.get(phase, 0.0)
        rows = []
        for lf in leaves:
            line = (lf.rationale or "").strip().splitlines()[0] if (lf.rationale or "").strip() else ""
            short = line[:200] + ("…" if len(line) > 200 or "\n" in (lf.rationale or "").strip() else "")
            rows.append(f"<tr class='leaf' data-leaf='{e(lf.id)}'><td><b>{e(lf.id)}</b></td><td>{e(lf.phase)}</td>"
                        f"<td>{e(lf.status)}</td><td class='num'>{num(lf.score, 2)}</td>"
                        f"<td class='num'>{lf.effective_weight:.4f}</td><td>{e(lf.method)}</td>"
                        f"<td title='{e(lf.rationale)}'>{e(short)}</td>"
                        f"<td class='mono'>{e(', '.join(lf.evidence_refs))}</td>"
                        f"<td>{review_link(review_url, run, tp.root.name, lf.id)}</td></tr>")
        share = f" ({earned / weight:.0%} of the phase)" if weight else ""
        out.append(f"<h3>{e(phase)} <span class='muted'>weight earned {earned:.4f} of {weight:.4f}{share}</span></h3>"
                   f"<table class='leaves' data-phase='{e(phase)}'><tr><th>id</th><th>phase</th><th>status</th>"
                   "<th>score</th><th>weight</th><th>method</th><th>rationale</th><th>evidence</th><th></th></tr>"
                   + "".join(rows) + "</table>")
    return (f"<p>R {scores.R:.4f} · coverage {scores.coverage:.3f} · full {scores.full}"
            + (" · <b>needs rescoring</b>" if scores.needs_rescoring else "") + "</p>" + "".join(out))


def _origin(rel: str, sources: dict[str, str]) -> str:
    if rel.startswith("replay/"):
        return "replay log"
    return "source (verified unchanged)" if rel.removeprefix("submission/") in sources else "regenerated"


def _evidence(tp: TrialPaths, base: str, provenance: dict[str, Any]) -> str:
    if not tp.evidence.is_dir():
        return "<p class='muted'>No evidence frozen yet.</p>"
    try:
        hashes, links = read_manifest(tp.evidence), read_links(tp.evidence)
    except (OSError, ValueError) as exc:
        hashes, links = {}, {}
        note = f"<p class='error'>manifest unreadable: {e(exc)}</p>"
    else:
        note = ""
    sources = provenance.get("source_hashes_before") or {}
    rows = []
    # Walk lists a folder's entries before entering any of them; a tree shows each folder's contents right
    # under it, so the entries are put in path order (at most MAX_LISTED read: a bound on the host's work)
    listed = []
    for entry in Walk(tp.evidence):
        listed.append(entry)
        if len(listed) >= MAX_LISTED:
            break
    listed.sort(key=lambda entry: entry.rel.split("/"))
    for n, entry in enumerate(listed):
        if n >= MAX_TREE:
            rows.append(f"<tr><td colspan='5' class='muted'>… first {MAX_TREE} entries shown</td></tr>")
            break
        depth, name = entry.rel.count("/"), entry.rel.rsplit("/", 1)[-1]
        pad = f"padding-left:{0.6 + 1.2 * depth:.1f}em"
        if entry.is_dir:
            rows.append(f"<tr class='dir' data-path='{e(entry.rel)}'><td style='{pad}'>{e(name)}/</td><td></td>"
                        "<td></td><td></td><td></td></tr>")
            continue
        manifest = entry.rel == "MANIFEST.sha256"
        digest = "–" if manifest else (hashes.get(entry.rel) or "not in the manifest")[:16]
        origin = "the manifest (written by the workbench)" if manifest else _origin(entry.rel, sources)
        box = f"pv{n}"
        raw = f"{base}/file/evidence/{'/'.join(q(p) for p in entry.rel.split('/'))}"
        preview = (f"<button class='preview-btn' data-preview='{base}/preview?{e(urlencode({'path': entry.rel}))}' "
                   f"data-target='{box}'>preview</button>" if entry.rel in hashes else "")
        rows.append(f"<tr class='file' data-path='{e(entry.rel)}'><td style='{pad}'><a href='{e(raw)}' "
                    f"target='_blank'>{e(name)}</a></td><td class='num'>{entry.st.st_size}</td>"
                    f"<td class='mono'>{e(digest)}</td><td>{e(origin)}</td><td>{preview}</td></tr>"
                    f"<tr><td colspan='5'><div class='preview' id='{box}' hidden></div></td></tr>")
    for rel, target in sorted(links.items()):
        rows.append(f"<tr class='link'><td class='mono'>{e(rel)}</td><td></td><td></td>"
                    f"<td colspan='2'>symbolic link to {e(target)} (recorded, never followed)</td></tr>")
    return (note + f"<p>{len(hashes)} file(s) in <code>MANIFEST.sha256</code>; previews are read in the confined "
            "reader, as the reviewer's are.</p><table class='evidence'><tr><th>path</th><th>bytes</th>"
            "<th>sha256</th><th>origin</th><th></th></tr>" + "".join(rows) + "</table>")


def _provenance(provenance: dict[str, Any], base: str, tp: TrialPaths) -> str:
    if not provenance:
        return "<p class='muted'>No replay yet.</p>"
    rows = []
    for k, v in provenance.items():
        if k in ("source_hashes_before", "source_hashes_after") and isinstance(v, dict):
            rows.append((k, f"{len(v)} file(s)"))
        else:
            rows.append((k, _value(v)))
    logs = " · ".join(f"<a href='{base}/file/replay/{name}' target='_blank'>{name}</a>"
                      for name in ("stdout.log", "stderr.log") if (tp.replay / name).is_file())
    return (f"<p>logs: {logs or '–'}</p>" if logs else "") + _kv(rows, "provenance")


def _receipts(tp: TrialPaths) -> str:
    if not tp.receipts.is_file():
        return "<p class='muted'>No receipts recorded.</p>"
    try:
        rc = Receipts.model_validate_json(tp.receipts.read_text())
    except ValueError as exc:
        return f"<p class='error'>receipts.json unreadable: {e(exc)}</p>"
    data = rc.model_dump()
    head = _kv([("complete", e(rc.complete)), ("problems", e("; ".join(rc.problems)) or "none"),
                *((k, _value(v)) for k, v in data.items()
                  if k not in ("complete", "problems", "processes", "files"))], "receipts")
    rows = []
    for p in rc.processes[:MAX_PROCESSES]:
        wrote = ", ".join(p.wrote[:4]) + (f" (+{len(p.wrote) - 4})" if len(p.wrote) > 4 else "")
        spent = ", ".join(f"{c.code} {c.cpu_sec:.1f}" for c in p.cpu_code[:3])  # where its CPU went (sampled)
        rows.append(f"<tr><td class='num'>{p.pid}</td><td class='mono'>{e(' → '.join(p.programs[-3:]))}</td>"
                    f"<td>{e(p.origin)}</td><td class='num'>{p.cpu_sec:.2f}</td><td class='mono'>{e(spent)}</td>"
                    f"<td class='num'>{num(p.peak_rss_mb, 1)}</td>"
                    f"<td>{e(', '.join(p.packages[:6]))}</td><td class='mono'>{e(wrote)}</td></tr>")
    more = len(rc.processes) - MAX_PROCESSES
    return (head + f"<h3>{len(rc.processes)} process(es)</h3><table class='processes'><tr><th>pid</th>"
            "<th>programs</th><th>origin</th><th>CPU s</th><th>CPU in</th><th>peak MB</th><th>packages</th>"
            "<th>wrote</th></tr>"
            + "".join(rows) + "</table>" + (f"<p class='muted'>… {more} more</p>" if more > 0 else ""))


def _clip(text: Any) -> str:
    s = text if isinstance(text, str) else json.dumps(text, default=str)
    return e(s[:TEXT_CHARS]) + (f"\n… ({len(s) - TEXT_CHARS} more characters)" if len(s) > TEXT_CHARS else "")


def _player(tp: TrialPaths, base: str) -> str:
    """A person's session: their terminal, played back from session/terminal.cast (static/terminal.js)."""
    if not tp.terminal_cast.is_file():
        return ""
    return (f"<div id='terminal-player' data-cast='{base}/file/session/terminal.cast' data-state='loading'>"
            "<h3>The person's terminal</h3><div class='controls'><button class='play'>play / pause</button> "
            "<button class='restart'>restart</button> <button class='end'>to the end</button> "
            "<select class='speed'><option value='1'>1×</option><option value='2'>2×</option>"
            "<option value='8' selected>8×</option><option value='32'>32×</option></select> "
            "<span class='status muted'>loading the recording…</span></div><div class='screen'></div></div>")


def _live(tp: TrialPaths, base: str) -> str:
    """A person's session that waits or runs: a terminal in the page, attached through the view."""
    if not tp.terminal_door.is_file():
        return ""
    return (f"<div id='terminal-live' data-base='{base}/terminal' data-state='connecting'>"
            "<h3>Your session: you are the agent</h3><p class='muted'>Type in the terminal below; "
            "<code>finish</code> ends the session, which is then replayed and scored as an agent's is. "
            "<span class='status'></span></p><div class='screen'></div></div>")


def _trajectory(tp: TrialPaths) -> str:
    if not tp.trajectory.is_file():
        return "<p class='muted'>No trajectory recorded.</p>"
    try:
        steps = read_trajectory(tp.trajectory)
    except (OSError, ValueError) as exc:
        return f"<p class='error'>trajectory.jsonl unreadable: {e(exc)}</p>"
    out = []
    for i, s in enumerate(steps[:MAX_STEPS], start=1):
        if not isinstance(s, dict):
            continue
        u = s.get("usage") or {}
        tokens = (u.get("prompt_tokens") or 0) + (u.get("completion_tokens") or 0)
        first = str(s.get("message") or "").strip().split("\n", 1)[0][:160]
        meta = " · ".join(x for x in (f"{s['elapsed_sec']} s" if s.get("elapsed_sec") is not None else "",
                                      f"{tokens} tokens" if tokens else "",
                                      cost(s.get("cost_usd")) if s.get("cost_usd") else "") if x)
        body = f"<pre>{_clip(s.get('message') or '')}</pre>" if s.get("message") else ""
        for c in s.get("tool_calls") or []:
            if isinstance(c, dict):
                body += f"<div>tool call <b>{e(c.get('name'))}</b></div><pre>{_clip(c.get('arguments') or '')}</pre>"
        for o in s.get("observations") or []:
            if isinstance(o, dict):
                body += f"<div>observation</div><pre>{_clip(o.get('content') or '')}</pre>"
        out.append(f"<details class='step'><summary>#{e(s.get('turn', i))} <b>{e(s.get('role', ''))}</b> "
                   f"<span class='muted'>{e(s.get('timestamp', ''))} {e(meta)}</span> {e(first)}</summary>"
                   f"{body}</details>")
    more = len(steps) - MAX_STEPS
    return (f"<p>{len(steps)} step(s)</p>" + "".join(out)
            + (f"<p class='muted'>… {more} more steps</p>" if more > 0 else ""))


def _notebooks(tp: TrialPaths, base: str) -> str:
    nbs = sorted(p.name for p in tp.notebooks.glob("*.ipynb") if p.is_file() and not p.is_symlink()) \
        if tp.notebooks.is_dir() else []
    if not nbs:
        return "<p class='muted'>No executed notebooks (the inline engine runs none).</p>"
    return "<ul class='notebooks'>" + "".join(f"<li><a href='{base}/notebook/{q(n)}' target='_blank'>{e(n)}</a></li>"
                                              for n in nbs) + "</ul>"


SECTIONS = [("summary", "Summary"), ("leaves", "Leaves by phase"), ("evidence", "Evidence"),
            ("provenance", "Provenance"), ("receipts", "Receipts"), ("trajectory", "Trajectory"),
            ("notebooks", "Notebooks")]


def trial_page(run: RunPaths, tp: TrialPaths, *, review_url: str | None, poll_seconds: float) -> str:
    base = trial_url(run.root.name, tp.root.name)
    try:
        provenance = json.loads(tp.provenance.read_text()) if tp.provenance.is_file() else {}
    except ValueError:
        provenance = {}
    rec = read_trial(tp)
    active = rec is not None and rec.status == "running"
    poll = f" data-poll='{base}/fragment/summary'" if active else ""
    review = (f"<p>Reviewer: <a href='{e(review_url)}' target='_blank'>{e(review_url)}</a> "
              f"(<code>workbench review serve {e(run.root)}</code>)</p>" if review_url else
              "<p class='muted'>Start <code>workbench review serve RUN</code> and pass its URL as "
              "<code>--review-url</code> to link each leaf to the reviewer.</p>")
    parts = {
        "summary": _live(tp, base) + f"<div id='trial-summary'{poll}>{_summary(run, tp)}</div>"
                   f"<h3>Stages</h3>{_stages(tp, base)}",
        "leaves": review + _leaves(tp, run.root.name, review_url),
        "evidence": _evidence(tp, base, provenance),
        "provenance": _provenance(provenance, base, tp),
        "receipts": _receipts(tp),
        "trajectory": _player(tp, base) + _trajectory(tp),
        "notebooks": _notebooks(tp, base),
    }
    nav = "<nav>" + "".join(f"<a href='#{k}'>{e(t)}</a>" for k, t in SECTIONS) + "</nav>"
    body = (f"<div class='crumbs'><a href='/'>runs</a> / {e(run.root.name)}</div>"
            f"<h1 class='trial-id'>{e(tp.root.name)}</h1>{nav}"
            + "".join(f"<section id='{k}'><h2>{e(t)}</h2>{parts[k]}</section>" for k, t in SECTIONS))
    terminal = tp.terminal_cast.is_file() or tp.terminal_door.is_file()
    return page(f"{tp.root.name} · workbench view", body, poll_seconds, terminal=terminal)
