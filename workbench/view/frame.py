"""The frame of every `workbench view` page: its style and script (served from ``/static/``) and the
formatting every page uses. Text that comes from a run passes :func:`e` (HTML escaping) or :func:`q` (URL
quoting) on its way into a page."""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

STATUS_COLORS = {"complete": "#54A24B", "running": "#4C78A8", "queued": "#BAB0AC", "infra_error": "#E45756",
                 "interrupted": "#F58518"}

CSS = """
#terminal-player .screen, #terminal-live .screen {display: inline-block; background: #000; padding: 4px;
  margin-top: .4em}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#24323f;color:#fff;padding:.6em 1.2em}header a{color:#fff;text-decoration:none}
main{padding:.8em 1.2em}h1{font-size:1.3em;margin:.2em 0}h2{font-size:1.15em;margin:1.2em 0 .3em}
h3{font-size:1em;margin:.9em 0 .2em}a{color:#1f5fa8}
table{border-collapse:collapse;margin:.3em 0;background:#fff}th,td{padding:.22em .6em;border-bottom:1px solid #e4e4e4;
text-align:left;vertical-align:top}th{background:#f0f0f0;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#f4f4f4;padding:.5em;max-height:24em;overflow:auto;white-space:pre-wrap;word-break:break-word;
margin:.2em 0}
.status{display:inline-block;padding:0 .5em;border-radius:.7em;color:#fff;font-size:12px}
.bar{display:flex;height:10px;width:420px;border-radius:5px;overflow:hidden;background:#eee;margin:.3em 0}
.muted{color:#777}.error{color:#b00}nav a{margin-right:1em}.preview{margin:.3em 0 .8em 1.5em}
details>summary{cursor:pointer}.step{border-left:3px solid #ddd;padding-left:.6em;margin:.4em 0}
button.preview-btn{font-size:11px;padding:0 .4em}table.leaves{width:100%}
form.message{margin:.5em 0 1.2em;padding:.5em .8em;background:#f0f3f7;border-radius:6px}form.message h3{margin:0 0 .3em}
form.message textarea,form.message input{vertical-align:middle}.question{border-left:4px solid #d90;padding-left:.6em}
table.sortable th[data-col]{cursor:pointer}
th[data-sorted=up]::after{content:' ▲'}th[data-sorted=down]::after{content:' ▼'}
table.grid td.cell a{text-decoration:none;color:inherit;display:block}table.grid td.cell:hover{background:#eef4fb}
table.compare tr.differs{background:#fff4e0}.tools{margin:.5em 0 1em}
td.latest pre{max-width:40em;max-height:12em;overflow:auto;white-space:pre-wrap;font-size:11px}
"""

JS = """
// elements with data-poll are refreshed from their URL every few seconds (a batch in progress);
// a fragment holding [data-final] is the last one (the trial finished)
const every = 1000 * (parseFloat(document.body.dataset.pollSeconds) || 3);
async function poll() {
  for (const el of document.querySelectorAll('[data-poll]')) {
    try {
      const r = await fetch(el.dataset.poll, {cache: 'no-store'});
      if (!r.ok) continue;
      const text = await r.text();
      if (text !== el.dataset.last) { el.innerHTML = text; el.dataset.last = text; arrange(); }
      if (el.querySelector('[data-final]')) { delete el.dataset.poll; location.reload(); }
    } catch (err) { /* the view stopped; keep what is shown */ }
  }
}
setInterval(poll, every);
// the run list: search, a status filter and sorting by a column, applied again after every refresh
const order = {col: null, dir: 1};
function key(row, col) {
  const cell = row.children[col];
  if (!cell) return '';
  if (cell.dataset.v !== undefined) return cell.dataset.v === '' ? null : parseFloat(cell.dataset.v);
  return cell.textContent.trim().toLowerCase();
}
function arrange() {
  const find = document.getElementById('find'), status = document.getElementById('status-filter');
  const words = find ? find.value.trim().toLowerCase() : '', want = status ? status.value : '';
  for (const table of document.querySelectorAll('table.sortable')) {
    const rows = [...table.querySelectorAll('tr[data-row]')];
    for (const r of rows) {
      r.hidden = !((!words || r.textContent.toLowerCase().includes(words)) && (!want || r.dataset.status === want));
    }
    if (order.col === null || !rows.length) continue;
    rows.sort((a, b) => {
      const x = key(a, order.col), y = key(b, order.col);
      if (x === y) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * order.dir;
    });
    for (const r of rows) r.parentNode.appendChild(r);
  }
  for (const th of document.querySelectorAll('table.sortable th[data-col]')) {
    th.dataset.sorted = +th.dataset.col === order.col ? (order.dir > 0 ? 'up' : 'down') : '';
  }
}
document.addEventListener('input', (ev) => { if (ev.target.closest('#find, #status-filter')) arrange(); });
document.addEventListener('change', (ev) => {
  if (ev.target.closest('#status-filter')) arrange();
  const side = ev.target.closest('select[data-compare]');
  if (side) {  // a comparison's two selectors: open the pair chosen
    const pick = (s) => document.querySelector(`select[data-compare='${s}']`).value;
    location.href = location.pathname + '?' + new URLSearchParams({a: pick('a'), b: pick('b')});
  }
});
// preview buttons load an evidence file's preview (read in the confined reader) below their row
document.addEventListener('click', async (ev) => {
  const th = ev.target.closest('table.sortable th[data-col]');
  if (th) { const col = +th.dataset.col; order.dir = order.col === col ? -order.dir : 1; order.col = col; arrange(); }
  const b = ev.target.closest('[data-preview]');
  if (!b) return;
  const box = document.getElementById(b.dataset.target);
  if (box.dataset.loaded) { box.hidden = !box.hidden; return; }
  box.hidden = false; box.textContent = 'reading the file in the confined reader ...';
  const r = await fetch(b.dataset.preview, {cache: 'no-store'});
  box.innerHTML = await r.text(); box.dataset.loaded = '1';
});
// a discovery run's message form: POSTed as JSON (the page's policy allows no form submission)
document.addEventListener('submit', async (ev) => {
  const f = ev.target.closest('form[data-message]');
  if (!f) return;
  ev.preventDefault();
  const status = f.querySelector('.message-status');
  status.textContent = 'sending ...';
  const r = await fetch(f.dataset.message, {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({session: f.elements.session.value, text: f.elements.text.value})});
  const data = await r.json().catch(() => ({error: 'the view answered ' + r.status}));
  status.textContent = r.ok ? `${data.sent} sent to ${data.session}` : data.error;
  if (r.ok) f.elements.text.value = '';
});
"""


def e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def q(value: str) -> str:
    return quote(value, safe="")


def num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def duration(sec: float | None) -> str:
    if sec is None:
        return "–"
    sec = int(round(sec))
    h, rest = divmod(sec, 3600)
    m, s = divmod(rest, 60)
    return f"{h} h {m:02d} m" if h else f"{m} m {s:02d} s" if m else f"{s} s"


def cost(usd: float | None) -> str:
    return "–" if not usd else f"${usd:.4f}"


def status_badge(status: str, stage: str | None = None) -> str:
    label = f"{status}: {stage}" if stage else status
    return (f"<span class='status status-{e(status)}' style='background:{STATUS_COLORS.get(status, '#777')}'>"
            f"{e(label)}</span>")


def trial_url(run: str, tid: str) -> str:
    return f"/run/{q(run)}/trial/{q(tid)}"


def page(title: str, body: str, poll_seconds: float = 3.0, terminal: bool = False) -> str:
    """A page of the view; ``terminal``: it plays a person's session (xterm.js and the player, all served by
    the view itself)."""
    head = "<link rel='stylesheet' href='/static/xterm.css'>" if terminal else ""
    tail = "<script src='/static/xterm.js'></script><script src='/static/terminal.js'></script>" if terminal else ""
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{e(title)}</title><link rel='stylesheet' href='/static/view.css'>{head}</head>"
            f"<body data-poll-seconds='{poll_seconds:g}'><header><a href='/'><b>workbench view</b></a></header>"
            f"<main>{body}</main><script src='/static/view.js'></script>{tail}</body></html>")
