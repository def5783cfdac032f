"""A discovery run's page in `workbench view`: its sessions, the score over time and the ranked history.

The run is found by name among the directories holding a discovery.json (never by joining a requested name
to a path). The page polls its fragment while the run goes on. The chart is an inline SVG drawn here: every
valid scored submission in the order it was scored, the best of each round, and the global best so far,
against the published record. Every string from the run (session messages, descriptions) is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..discovery.records import DiscoveryState, RankedHistory, find_runs, read_state, scored_attempts
from ..paths import TrialPaths
from .frame import duration, e, num, page, q
from .live import tail

W, H, PAD = 720, 260, 40


def _points(out: Path, state: DiscoveryState) -> list[dict[str, Any]]:
    """Every scored submission of the implement sessions, in the order they were scored."""
    pts = []
    for s, a in scored_attempts(out, state):
        d = a.discovery or {}
        pts.append({"at": a.at, "session": s.id, "round": s.round, "valid": d.get("valid") is True,
                    "metric": d.get("metric") if d.get("valid") is True else None})
    return sorted(pts, key=lambda p: p["at"])


def latest(out: Path, sid: str, tail_bytes: int = 16384) -> str:
    """A session's latest output: its trajectory's last step (what the agent said and what it saw), from the
    file's last ``tail_bytes`` only (a long session's trajectory is not read every poll)."""
    text = tail(TrialPaths(out / "sessions" / sid).trajectory, tail_bytes)
    try:
        step = json.loads(text.splitlines()[-1]) if text else {}
    except ValueError:
        return ""
    if not isinstance(step, dict):
        return ""
    seen = [str(o.get("content", "")) for o in step.get("observations") or [] if isinstance(o, dict)]
    text = "\n".join([str(step.get("message") or ""), *seen[-1:]]).strip()
    if not text:
        return ""
    return (f"<details><summary>turn {e(step.get('turn'))}: {e(text.splitlines()[0][:60])}</summary>"
            f"<pre>{e(text[:1500])}</pre></details>")


def chart(out: Path, state: DiscoveryState, history: RankedHistory | None) -> str:
    """The score over time: each valid submission (a dot), the global best so far (a line), the best of each
    round (a ring) and the published record (a dashed line)."""
    pts = _points(out, state)
    valid = [p for p in pts if p["valid"]]
    if not valid:
        return f"<p class='muted'>No valid submission yet ({len(pts)} scored).</p>"
    sign = 1 if (history and history.direction == "maximize") or not history else -1
    record = history.published if history else None
    ys = [p["metric"] for p in valid] + ([record] if record is not None else [])
    lo, hi = min(ys), max(ys)
    span = (hi - lo) or 1.0

    def x(i: int) -> float:
        return PAD + (W - 2 * PAD) * (i / max(len(pts) - 1, 1))

    def y(v: float) -> float:
        return H - PAD - (H - 2 * PAD) * (v - lo) / span

    dots, best, line, rounds = [], None, [], {}
    for i, p in enumerate(pts):
        if not p["valid"]:
            dots.append(f"<circle cx='{x(i):.1f}' cy='{H - PAD + 8}' r='2' fill='#c33'><title>invalid "
                        f"({e(p['session'])})</title></circle>")
            continue
        m = p["metric"]
        dots.append(f"<circle cx='{x(i):.1f}' cy='{y(m):.1f}' r='3' fill='#4a7'><title>{e(p['session'])}: "
                    f"{m:.10g}</title></circle>")
        if best is None or sign * (m - best) > 0:
            best = m
        line.append(f"{x(i):.1f},{y(best):.1f}")
        r = rounds.get(p["round"])
        if r is None or sign * (m - r[1]) > 0:
            rounds[p["round"]] = (i, m)
    rings = "".join(f"<circle cx='{x(i):.1f}' cy='{y(m):.1f}' r='7' fill='none' stroke='#27c'><title>best of round "
                    f"{r}: {m:.10g}</title></circle>" for r, (i, m) in sorted(rounds.items()))
    ref = (f"<line x1='{PAD}' x2='{W - PAD}' y1='{y(record):.1f}' y2='{y(record):.1f}' stroke='#999' "
           f"stroke-dasharray='4 4'/><text x='{W - PAD}' y='{y(record) - 4:.1f}' text-anchor='end' font-size='11'>"
           f"published {record:g}</text>") if record is not None else ""
    axis = (f"<text x='4' y='{y(hi) + 4:.1f}' font-size='11'>{hi:.6g}</text>"
            f"<text x='4' y='{y(lo) + 4:.1f}' font-size='11'>{lo:.6g}</text>"
            f"<text x='{W / 2}' y='{H - 4}' text-anchor='middle' font-size='11'>scored submissions, in order</text>")
    return (f"<svg class='chart' viewBox='0 0 {W} {H}' width='{W}' height='{H}' role='img' "
            f"aria-label='score over time'>{ref}{axis}<polyline points='{' '.join(line)}' fill='none' "
            f"stroke='#27c' stroke-width='2'/>{''.join(dots)}{rings}</svg>"
            f"<p class='muted'>Dots: valid submissions (red below the axis: invalid); line: the best so far; "
            f"rings: each round's best. Best {best:.10g}.</p>")


def fragment(out: Path) -> str:
    state = read_state(out)
    hpath = out / "history.json"
    history = RankedHistory.model_validate_json(hpath.read_text(encoding="utf-8")) if hpath.is_file() else None
    rows = "".join(
        f"<tr class='session' data-session='{e(s.id)}'><td>{e(s.id)}</td><td>{e(s.phase)}</td>"
        f"<td class='num'>{s.round or ''}</td><td>{e(s.status)}</td><td>{e(s.agent_status or '')}</td>"
        f"<td>{e(s.hypothesis or '')}</td><td class='num'>{s.attempts}</td>"
        f"<td class='num'>{num(s.best_metric, 10)}</td><td class='num'>{duration(s.wall_sec)}</td>"
        f"<td>{e(s.error or '')}</td><td class='latest'>{latest(out, s.id) if s.status != 'pending' else ''}</td></tr>"
        for s in state.sessions)
    table = ("<table class='sessions'><tr><th>session</th><th>phase</th><th>round</th><th>status</th><th>agent</th>"
             "<th>hypothesis</th><th>submissions</th><th>best</th><th>time</th><th>error</th><th>latest output</th>"
             "</tr>" + rows + "</table>")
    ranked = ""
    if history and history.entries:
        ranked = ("<h3>Ranked history</h3><table class='history'><tr><th>rank</th><th>metric</th><th>session</th>"
                  "<th>description</th></tr>" + "".join(
                      f"<tr><td class='num'>{h.rank}</td><td class='num'>{h.metric:.10g}</td><td>{e(h.session)}</td>"
                      f"<td>{e(h.description[:200])}</td></tr>" for h in history.entries[:10]) + "</table>")
    final = state.final or {}
    verdict = (f"<p class='final'>Final: {e(final.get('session'))}'s best replayed cleanly: metric "
               f"{num(final.get('metric'), 10)}, valid {e(final.get('valid'))}, R = {num(final.get('R'), 4)}</p>"
               if final.get("status") == "scored" else
               f"<p class='final'>Final: {e(final.get('status', 'the run is still going'))}</p>")
    stopped = f"<p class='stopped'>Stopped: {e(state.stopped)}</p>" if state.stopped else ""
    if state.question is not None and state.answer is None:
        stopped += (f"<div class='question'><b>The preparation asks a person, and the run waits for the answer</b> "
                    f"(a message to <code>prepare</code>):<pre>{e(state.question)}</pre></div>")
    return f"{stopped}{verdict}<h3>Score over time</h3>{chart(out, state, history)}{table}{ranked}"


def message_form(name: str, state: DiscoveryState) -> str:
    """A person's message to a running session, or the answer to the preparation's questions (outside the
    polled part of the page, so what is being typed survives a refresh)."""
    waiting = state.question is not None and state.answer is None
    running = [s.id for s in state.sessions if s.status == "running"]
    default = "prepare" if waiting else (running[0] if running else "")
    options = "".join(f"<option value='{e(s.id)}'>" for s in state.sessions)
    return (f"<form class='message' data-message='/discovery/{q(name)}/message'><h3>Message a session</h3>"
            f"<label>session <input name='session' list='session-ids' size='10' value='{e(default)}' required>"
            f"</label><datalist id='session-ids'>{options}</datalist> "
            f"<textarea name='text' rows='2' cols='70' required placeholder='reaches the agent on its next turn'>"
            f"</textarea> <button type='submit'>Send</button> <span class='message-status' role='status'></span>"
            f"</form>")


def discovery_page(name: str, out: Path, poll_seconds: float) -> str:
    state = read_state(out)
    body = (f"<h1>Discovery run {e(name)} <span class='muted'>({e(state.task)}, {state.rounds} rounds x "
            f"{state.parallel} sessions)</span></h1>{message_form(name, state)}"
            f"<div id='discovery' data-poll='/discovery/{q(name)}/fragment'>{fragment(out)}</div>")
    return page(f"discovery {name}", body, poll_seconds)


def links(root: Path) -> str:
    """The run list's section of discovery runs."""
    found = find_runs(root)
    if not found:
        return ""
    items = "".join(f"<li><a href='/discovery/{q(n)}'>{e(n)}</a></li>" for n in sorted(found))
    return f"<section class='discovery-runs'><h2>Discovery runs</h2><ul>{items}</ul></section>"
