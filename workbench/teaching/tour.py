"""The guided tour (notebooks/tour.ipynb): the few helpers its cells call, and building it as HTML.

The tour walks a newcomer through one real task: the claim and the contract, what the agent sees,
clean replays of the oracle and of a calibration ``invalid`` submission, the frozen evidence, the
scores by phase and the leaf that separates them, the reviewer, and a small batch with the analysis
views. ``workbench tour`` (``make tour``) executes it with papermill and writes an offline HTML page.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..paths import TrialPaths
from ..scoring.results import read_scores
from ..task import Task

REPO = Path(__file__).resolve().parents[2]
TOUR = REPO / "notebooks" / "tour.ipynb"
DEMO_TASK = REPO / "tasks" / "h2-pes"

WHO_SEES = {  # top-level part of a task package -> (agent session, clean replay, scorer and reviewers)
    "task.toml": ("limits only", "limits only", "yes"),
    "instruction.md": ("yes", "no", "yes"),
    "environment/paper/": ("yes", "no", "yes"),
    "environment/starter_submission/": ("as the starting working copy", "no", "yes"),
    "environment/install.sh, Dockerfile": ("the installed environment, read-only", "the same, read-only", "yes"),
    "solution/": ("no (the oracle agent only)", "no", "yes"),
    "tests/ (rubric, checks, refs)": ("no", "no", "yes"),
    "calibration/": ("no", "no", "yes"),
}


def visibility(task: Task) -> pd.DataFrame:
    """Who sees which part of the task package, with the files each part holds."""
    rows = []
    for part, (agent, replay, scorer) in WHO_SEES.items():
        first = part.split(" ")[0].split(",")[0].rstrip("/")
        p = task.root / first
        files = sum(1 for q in p.rglob("*") if q.is_file()) if p.is_dir() else int(p.is_file())
        rows.append({"part": part, "files": files, "agent session": agent, "clean replay": replay,
                     "scorer / reviewers": scorer})
    return pd.DataFrame(rows)


def _scores(trial: Path) -> dict:
    return read_scores(TrialPaths(Path(trial)), required=True).model_dump(mode="json")


def phase_shares(trials: dict[str, Path]) -> pd.DataFrame:
    """The share of each phase's weight earned (%) and R, for several trials side by side."""
    rows = {}
    for name, trial in trials.items():
        s = _scores(trial)
        rows[name] = {**{p: 100 * s["phases"][p] / s["phase_weights"][p] if s["phase_weights"][p] else None
                         for p in s["phases"]}, "R": s["R"], "coverage": s["coverage"]}
    return pd.DataFrame(rows).T


def phase_share_bars(table: pd.DataFrame):
    """Grouped bars of each trial's phase shares (:func:`phase_shares`): an embedded PNG with alt text."""
    import base64
    import io

    import matplotlib.pyplot as plt
    from IPython.display import HTML

    phases = [c for c in table.columns if c not in ("R", "coverage")]
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    width = 0.8 / max(1, len(table))
    for i, (name, row) in enumerate(table.iterrows()):
        ax.bar([j + i * width for j in range(len(phases))], [row[p] or 0 for p in phases], width,
               label=f"{name} (R = {row['R']:.3f})")
    ax.set_xticks([j + width * (len(table) - 1) / 2 for j in range(len(phases))], phases)
    ax.set_ylabel("% of the phase's weight earned")
    ax.set_ylim(0, 105)
    ax.legend(frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    alt = "Share of each phase's weight earned: " + "; ".join(f"{n} R = {r['R']:.3f}" for n, r in table.iterrows())
    return HTML(f'<img alt="{alt}" style="max-width:100%" '
                f'src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}"/>')


def separating_leaves(a: Path, b: Path, names: tuple[str, str] = ("a", "b")) -> pd.DataFrame:
    """Leaves whose scores differ between two trials, the most weight first: what tells them apart."""
    la = {lf["id"]: lf for lf in _scores(a)["leaves"]}
    lb = {lf["id"]: lf for lf in _scores(b)["leaves"]}
    rows = []
    for lid, x in la.items():
        y = lb.get(lid)
        if y is None or x["score"] == y["score"]:
            continue
        diff = abs((x["score"] or 0) - (y["score"] or 0)) * x["effective_weight"]
        rows.append({"leaf": lid, "phase": x["phase"], "weight": round(x["effective_weight"], 4),
                     f"{names[0]} score": x["score"], f"{names[1]} score": y["score"], "R at stake": round(diff, 4),
                     "title": x["title"], f"why {names[1]}": y["rationale"][:200]})
    out = pd.DataFrame(rows)
    return out.sort_values("R at stake", ascending=False, ignore_index=True) if len(out) else out


def reviewer_snapshot(reviewer, leaves: list[tuple[str, str]], evidence_chars: int = 6000) -> str:
    """Static HTML of what the reviewer shows for each (trial id, leaf id): for pages without a kernel."""
    parts = []
    for trial, leaf in leaves:
        reviewer.leaves.value = (trial, leaf)
        parts.append("<div style='border:1px solid #ccc;padding:0.6em;margin:0.4em 0'>"
                     + reviewer.detail.value + reviewer.evidence.value[:evidence_chars] + "</div>")
    return "".join(parts)


def build_tour(out: Path | str, *, work_dir: Path | str | None = None, task_dir: Path | str = DEMO_TASK,
               progress: bool = False) -> Path:
    """Execute the tour into ``out`` (HTML, offline) with the executed notebook beside it; ``progress``
    shows a bar of the notebook's cells (the tour runs real trials: about a minute)."""
    from ..analysis.report import export_html
    from ..jupyter.notebooks import execute_notebook

    out = Path(out)
    work = Path(work_dir) if work_dir else out.parent / "tour-runs"
    executed = execute_notebook(TOUR, out.with_suffix(".ipynb"), {
        "task_dir": str(Path(task_dir).resolve()), "work_dir": str(work.resolve())}, progress_bar=progress)
    return export_html(executed, out, "A guided tour of the workbench", code=True)
