"""The leaf reviewer: an ipywidgets app over one trial or a whole run (JupyterLab and Voila).

Left: filters (show, phase, task) and the leaves; right: the leaf (requirement, phase, effective
weight, method, score and status, the judge's or check's rationale, review history), previews of its
evidence, and the review form (score as the leaf's scale declares, comment, reviewer name, Save).

When a run requires two or more independent reviewers the reviewer is **blind**: other reviewers'
records of a leaf stay hidden until the leaf is decided (reviewed, disputed or adjudicated).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import ipywidgets as w

from ..errors import WorkbenchError
from ..evidence import read_manifest
from ..paths import RunPaths, TrialPaths
from ..reader.client import Reader
from ..scoring.finalize import ReviewRecord
from ..scoring.results import read_scores
from ..store import Store
from .records import record_review, reviewers_required, run_of
from .stats import binarize

SHOW = [("awaiting review", "awaiting"), ("all leaves", "all"), ("disputed", "disputed"),
        ("expert vs judge/check disagree", "disagree"), ("decided by experts", "decided")]
ICONS = {"scored": "✓", "missing_evidence": "∅", "gated": "⊘", "pending_review": "…", "withheld": "!",
         "reviewed": "★", "adjudicated": "⚖", "disputed": "≠"}
STATUS_WORDS = {"scored": "scored", "missing_evidence": "evidence missing", "gated": "gated",
                "pending_review": "awaiting review", "withheld": "withheld", "reviewed": "reviewed",
                "adjudicated": "adjudicated", "disputed": "disputed"}
DECIDED = ("reviewed", "adjudicated", "disputed")
PREVIEW_MEMORY_MB = 1024
TABLE_STYLE = "<style>.wb-detail th {text-align:left; padding-right:1em; vertical-align:top}</style>"


def _load_rubric_text(task_dir: str | None) -> dict[str, str]:
    """leaf id -> requirement text from the trial's task package (empty when it cannot be read)."""
    if not task_dir:
        return {}
    try:
        from ..task import load_task

        return {lf.id: lf.node.requirements for lf in load_task(task_dir).rubric.leaves}
    except Exception:  # a moved or broken task package must not stop the review of its evidence
        return {}


def query_selection(query: str) -> tuple[str, str] | None:
    """(trial, leaf) from a URL query string ``trial=T&leaf=L`` (Voila gives the kernel QUERY_STRING)."""
    from urllib.parse import parse_qs

    q = parse_qs(query or "")
    return (q["trial"][0], q["leaf"][0]) if q.get("trial") and q.get("leaf") else None


def _percent(weight: Any) -> str:
    """A leaf's effective weight (a float, or a fraction as scores.json writes it) as a percentage of R."""
    from fractions import Fraction

    try:
        return f"{100 * float(Fraction(str(weight))):.3g} %"
    except (TypeError, ValueError, ZeroDivisionError):
        return "?"


def open_reviewer(run_dir: str | Path, *, reviewer: str = "", query: str = "") -> w.Widget:
    """The reviewer of ``run_dir``, or where there is none, one line that says why and what to set: the review
    notebook opened on its own in JupyterLab shows this, not a traceback.

    Args:
        run_dir: a run directory (with trials/) or one trial in it.
        reviewer: the name filled in the reviewer field.
        query: a URL query string ``trial=T&leaf=L`` that opens one leaf (Voila passes the page's).
    """
    try:
        return Reviewer(run_dir, reviewer=reviewer, select=query_selection(query))
    except WorkbenchError as exc:
        return w.HTML(f"<p class='wb-message'><b>No run to review:</b> {html.escape(str(exc))}. Set "
                      "<code>run_dir</code> in the cell above to a run directory (one holding trials/), or open "
                      "the run with <code>workbench lab RUN</code>.</p>")


class Reviewer(w.VBox):
    """The leaf reviewer: a widget that lists the leaves of ``target``, shows each one's requirement and
    evidence, and saves an expert's review (:func:`record_review`).

    Args:
        target: a run directory or one trial inside a run.
        store: the results store (default: the run's).
        reviewer: the name filled in the reviewer field.
        show: the first filter: ``awaiting``, ``all``, ``disputed``, ``disagree`` or ``decided``.
        select: (trial, leaf) to open first.
    """

    def __init__(self, target: str | Path, *, store: Store | None = None, reviewer: str = "",
                 show: str = "awaiting", select: tuple[str, str] | None = None):
        target = Path(target).resolve()
        if TrialPaths(target).scores.is_file() or TrialPaths(target).trial_json.is_file():
            run_dir, self.only_trial = run_of(target), target.name
            if run_dir is None:
                raise WorkbenchError(f"{target} is not inside a run directory (RUN/trials/TRIAL)")
        elif RunPaths(target).trials.is_dir():
            run_dir, self.only_trial = target, None
        else:
            raise WorkbenchError(f"{target}: neither a run directory (with trials/) nor a trial directory")
        self.run = RunPaths(run_dir)
        self.store = store or Store.for_run(self.run.root)
        self.blind = reviewers_required(self.store, self.run.root.name) >= 2
        self._requirements: dict[str, dict[str, str]] = {}
        self.rows: list[dict[str, Any]] = []

        self.show = w.Dropdown(options=SHOW, value=show, description="Show")
        self.phase = w.Dropdown(options=[("all", None), ("modeling", "modeling"), ("execution", "execution"),
                                         ("validation", "validation")], description="Phase")
        self.task = w.Dropdown(options=[("all", None)], description="Task")
        self.leaves = w.Select(options=[], rows=14, layout=w.Layout(width="100%"))
        self.summary = w.HTML()
        self.detail = w.HTML()
        self.evidence = w.HTML()
        self.binary_score = w.ToggleButtons(options=[("0 · not met", 0.0), ("1 · met", 1.0)], value=None,
                                            description="Score")
        self.continuous_score = w.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.05, description="Score",
                                              readout_format=".2f")
        self.score_box = w.Box([self.binary_score])
        self.comment = w.Textarea(placeholder="what you checked and why", description="Comment",
                                  layout=w.Layout(width="95%"))
        self.reviewer = w.Text(value=reviewer, placeholder="your name", description="Reviewer")
        self.adjudicate = w.Checkbox(value=False, description="adjudication (final decision)", indent=False)
        self.save = w.Button(description="Save review", button_style="primary")
        self.message = w.HTML()
        for widget, cls in [(self.show, "wb-show"), (self.phase, "wb-phase"), (self.task, "wb-task"),
                            (self.leaves, "wb-leaves"), (self.detail, "wb-detail"), (self.evidence, "wb-evidence"),
                            (self.binary_score, "wb-score"), (self.continuous_score, "wb-score-continuous"),
                            (self.comment, "wb-comment"), (self.reviewer, "wb-reviewer"),
                            (self.adjudicate, "wb-adjudicate"), (self.save, "wb-save"), (self.message, "wb-message"),
                            (self.summary, "wb-summary")]:
            widget.add_class(cls)

        for f in (self.show, self.phase, self.task):
            f.observe(lambda _: self._filter(), names="value")
        self.leaves.observe(self._picked, names="value")
        self._saved: tuple[str, str] | None = None  # the leaf just saved: kept in the list beside its confirmation
        self.save.on_click(lambda _: self.save_review())

        self.form = w.VBox([self.score_box, self.comment, w.HBox([self.reviewer, self.adjudicate]), self.save])
        left = w.VBox([self.show, self.phase, self.task, self.leaves], layout=w.Layout(width="38%"))
        right = w.VBox([self.detail, self.form, self.message, self.evidence], layout=w.Layout(width="62%"))
        super().__init__([self.summary, w.HBox([left, right])])
        self.reload()
        if select is not None:
            self.select(*select)

    def select(self, trial: str, leaf: str) -> bool:
        """Open one leaf (a link from `workbench view`), showing all leaves if the filter hides it."""
        if not any(r["trial"] == trial and r["id"] == leaf for r in self.rows):
            self._say(f"no leaf {leaf!r} in trial {trial!r} here", error=True)
            return False
        if not self._matches(next(r for r in self.rows if r["trial"] == trial and r["id"] == leaf)):
            self.phase.value, self.task.value, self.show.value = None, None, "all"
        self.leaves.value = (trial, leaf)
        return True

    # --- data ---------------------------------------------------------------------------------

    def _trial_dirs(self) -> list[Path]:
        if self.only_trial:
            return [self.run.trials / self.only_trial]
        return sorted(d for d in self.run.trials.iterdir() if TrialPaths(d).scores.is_file())

    def reload(self) -> None:
        """Re-read scores.json of every trial (after a save, or when another reviewer saved)."""
        rows, reviews = [], self.store.reviews_for(self.run.root.name, self.only_trial)
        self.trials: dict[str, dict[str, Any]] = {}
        for d in self._trial_dirs():
            tp = TrialPaths(d)
            found = read_scores(tp)
            if found is None:
                continue
            scores = found.model_dump(mode="json")
            rec = json.loads(tp.trial_json.read_text()) if tp.trial_json.is_file() else {}
            self.trials[d.name] = {"dir": d, "scores": scores, "task_dir": rec.get("task_dir")}
            for lf in scores["leaves"]:
                mine = reviews[(reviews["trial_id"] == d.name) & (reviews["leaf_id"] == lf["id"])] \
                    if not reviews.empty else reviews
                rows.append({"trial": d.name, "task": scores["task"], **lf, "history": mine})
        self.rows = rows
        tasks = sorted({r["task"] for r in rows})
        keep = self.task.value
        self.task.options = [("all", None)] + [(t, t) for t in tasks]
        self.task.value = keep if keep in tasks else None
        self._filter()

    def _picked(self, change) -> None:
        if change["new"] != self._saved:  # another leaf: the confirmation was the saved one's
            self._saved = None
            self.message.value = ""
        self._render_leaf()

    def _matches(self, r: dict[str, Any]) -> bool:
        if self._saved == (r["trial"], r["id"]):
            return True
        show = self.show.value
        if self.phase.value and r["phase"] != self.phase.value:
            return False
        if self.task.value and r["task"] != self.task.value:
            return False
        if show == "awaiting":
            return r["status"] in ("pending_review", "withheld", "disputed")
        if show == "disputed":
            return r["status"] == "disputed"
        if show == "decided":
            return r["status"] in DECIDED
        if show == "disagree":
            m = r.get("machine") or {}
            return (r["status"] in ("reviewed", "adjudicated") and m.get("score") is not None
                    and binarize([m["score"]]) != binarize([r["score"]]))
        return True

    def _filter(self) -> None:
        current = self.leaves.value
        shown = [r for r in self.rows if self._matches(r)]
        many = self.only_trial is None and len(self.trials) > 1
        options = []
        for r in shown:
            score = "no score" if r["score"] is None else f"score {r['score']:g}"
            where = f"{r['trial']} · " if many else ""
            weight = _percent(r.get("effective_weight"))
            title = f" · {r['title'][:60]}" if r.get("title") else ""
            options.append((f"{ICONS.get(r['status'], '?')} {where}{r['id']} · {r['phase']} · weight {weight} · "
                            f"{STATUS_WORDS.get(r['status'], r['status'])} · {score}{title}", (r["trial"], r["id"])))
        self.leaves.options = options
        values = [v for _, v in options]
        self.leaves.value = current if current in values else (values[0] if values else None)
        self._render_summary(len(shown))
        self._render_leaf()

    # --- rendering ----------------------------------------------------------------------------

    def _render_summary(self, shown: int) -> None:
        parts = []
        for tid, t in self.trials.items():
            s = t["scores"]
            waiting = sum(1 for lf in s["leaves"] if lf["status"] in ("pending_review", "withheld", "disputed"))
            parts.append(f"<tr><td>{html.escape(tid)}</td><td>{s['R']:.4f}</td><td>{s['coverage']:.3f}</td>"
                         f"<td>{waiting}</td></tr>")
        blind = " · <b>blind review</b> (two reviewers per leaf)" if self.blind else ""
        self.summary.value = (f"<div><b>{html.escape(self.run.root.name)}</b>: {shown} of {len(self.rows)} "
                              f"leaves shown{blind}</div><table class='wb-trials'><tr><th>trial</th><th>R</th>"
                              f"<th>coverage</th><th>awaiting</th></tr>{''.join(parts)}</table>")

    def current(self) -> dict[str, Any] | None:
        if self.leaves.value is None:
            return None
        trial, leaf = self.leaves.value
        return next((r for r in self.rows if r["trial"] == trial and r["id"] == leaf), None)

    def _requirement(self, trial: str, leaf: str) -> str:
        task_dir = self.trials[trial]["task_dir"]
        if task_dir not in self._requirements:
            self._requirements[task_dir] = _load_rubric_text(task_dir)
        return self._requirements[task_dir].get(leaf, "")

    def _history(self, r: dict[str, Any]) -> str:
        """The leaf's review records; a record of other evidence than the trial holds now is marked stale
        (it is never applied: the leaf must be reviewed again)."""
        h = r["history"]
        if h.empty:
            return "<div><i>no reviews yet</i></div>"
        evidence = self.trials[r["trial"]]["scores"].get("evidence_digest")
        applies = [rec.judged(evidence, r.get("evidence_digest")) for rec in ReviewRecord.from_frame(h)]
        stale = applies.count(False)
        note = (f"<div class='wb-stale' style='color:#b00'>{stale} stale review(s): they judged other evidence "
                "(the trial was re-run) and are not applied; review the leaf again</div>" if stale else "")
        if self.blind and r["status"] not in DECIDED:
            return (f"<div><i>{len(h)} review(s) recorded; hidden until the leaf is decided (blind review)</i>"
                    f"</div>{note}")
        rows = "".join(f"<tr><td>{html.escape(str(x.created_at))}</td><td>{html.escape(x.kind)}</td>"
                       f"<td>{html.escape(x.reviewer)}</td><td>{x.score:g}</td>"
                       f"<td>{html.escape(x.comment or '')}</td><td>{'' if ok else '<b>stale</b>'}</td></tr>"
                       for x, ok in zip(h.itertuples(), applies, strict=True))
        return (note + "<table><tr><th>when</th><th>kind</th><th>who</th><th>score</th><th>comment</th><th></th></tr>"
                f"{rows}</table>")

    def _render_leaf(self) -> None:
        r = self.current()
        if r is None:
            self.detail.value = ("<i>No leaf matches the filters</i>"
                                 + (": nothing awaits review." if self.show.value == "awaiting" else "."))
            self.evidence.value = ""
            self.form.layout.display = "none"
            return
        self.form.layout.display = None
        e = html.escape
        machine = r.get("machine")
        was = ""
        if machine:
            ms = "–" if machine["score"] is None else f"{machine['score']:g}"
            was = (f"<tr><th>{'judge' if r.get('judge') else 'check'}</th><td>{ms} ({e(machine['status'])}): "
                   f"{e(machine.get('rationale') or '')}</td></tr>")
        score = "–" if r["score"] is None else f"{r['score']:g}"
        req = self._requirement(r["trial"], r["id"])
        self.detail.value = (
            f"<h3 style='margin:0.2em 0'>{e(r['id'])}: {e(r['title'])}</h3>"
            + (f"<p>{e(req)}</p>" if req and req != r["title"] else "")
            + f"<table>{TABLE_STYLE}"
            f"<tr><th>trial</th><td>{e(r['trial'])} ({e(r['task'])})</td></tr>"
            f"<tr><th>phase</th><td>{e(r['phase'])}</td></tr>"
            f"<tr><th>effective weight</th><td>{r['effective_weight']:.4f}</td></tr>"
            f"<tr><th>method</th><td>{e(r['method'])} ({e(r.get('scale', 'binary'))})</td></tr>"
            f"<tr><th>score</th><td><b>{score}</b> · {e(r['status'])}</td></tr>"
            f"<tr><th>rationale</th><td>{e(r.get('rationale') or '')}</td></tr>"
            + (f"<tr><th>error</th><td>{e(r['error'])}</td></tr>" if r.get("error") else "")
            + was + "</table><h4>Reviews</h4>" + self._history(r))
        continuous = r.get("scale") == "continuous"
        self.score_box.children = [self.continuous_score if continuous else self.binary_score]
        self.binary_score.value = None
        self.adjudicate.value = r["status"] == "disputed"
        tp = TrialPaths(self.trials[r["trial"]]["dir"])
        prov = json.loads(tp.provenance.read_text()) if tp.provenance.is_file() else {}
        refs = r.get("evidence_refs") or []
        # the previews parse what the submission wrote: in the confined reader, never in this kernel
        shown = (Reader(tp.evidence, prov, memory_mb=PREVIEW_MEMORY_MB).previews(refs, read_manifest(tp.evidence))
                 if refs else "")
        self.evidence.value = "<h3>Evidence</h3>" + (shown or "<i>no evidence listed for this leaf</i>")

    # --- saving -------------------------------------------------------------------------------

    def save_review(self) -> dict[str, Any] | None:
        """Record the form as a review of the selected leaf; the message says what changed or what is wrong."""
        r = self.current()
        if r is None:
            return self._say("choose a leaf first", error=True)
        if not self.reviewer.value.strip():
            return self._say("enter your name before saving", error=True)
        continuous = r.get("scale") == "continuous"
        score = self.continuous_score.value if continuous else self.binary_score.value
        if score is None:
            return self._say("choose a score (0 or 1)", error=True)
        try:
            out = record_review(self.trials[r["trial"]]["dir"], r["id"], float(score), reviewer=self.reviewer.value,
                                comment=self.comment.value, store=self.store,
                                kind="adjudication" if self.adjudicate.value else "review")
        except WorkbenchError as exc:
            return self._say(str(exc), error=True)
        self.comment.value = ""
        self._saved = (r["trial"], r["id"])  # the confirmation stays at this leaf, even if the filter hides it
        self.reload()
        self._say(f"saved #{out['review_id']}: {r['id']} is {out['leaf_status']}"
                  + (f" ({out['leaf_score']:g})" if out["leaf_score"] is not None else "")
                  + f"; R {out['R_before']:.4f} → {out['R']:.4f}")
        return out

    def _say(self, text: str, error: bool = False) -> None:
        color = "#b00" if error else "#060"
        self.message.value = f"<span style='color:{color}'>{html.escape(text)}</span>"
