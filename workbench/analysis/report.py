"""`workbench report`: execute the overview notebook with papermill and export one offline HTML file.

The executed notebook is kept beside the HTML (``reports/NAME.ipynb``): every number in a report has
an executed notebook behind it. Code cells are left out of the HTML (readers rarely rerun code);
plotly.js is embedded once (~4.8 MB; the plotly ``notebook`` renderer, since a kernel's default
renderer output is dropped by nbconvert) so the figures stay interactive offline. ``static=True``
draws matplotlib PNGs instead (a few hundred kB, renders anywhere).
"""

from __future__ import annotations

import html
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from ..errors import WorkbenchError

# the template's require.js and MathJax, and plotly's per-figure MathJax, come from a CDN; the report
# uses neither (plotly.js is embedded and defines itself without require.js), so an offline reader's
# browser is not sent looking for them
REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc=[\"']https?://[^\"']*[\"'][^>]*>\s*</script>")
OVERVIEW = Path(__file__).resolve().parents[2] / "notebooks" / "analysis" / "overview.ipynb"
DISCOVERY = OVERVIEW.with_name("discovery.ipynb")  # a directory of discovery runs only


def setup_plotly(static: bool) -> bool:
    """Configure plotly for JupyterLab and HTML export; returns True when figures must be static."""
    if static:
        return True
    try:
        import plotly.io as pio
    except ImportError:
        return True
    if "jsonschema" not in sys.modules:  # the notebook renderer imports nbformat, which needs no IRI grammars:
        sys.modules.setdefault("rfc3987_syntax", None)  # ~1.4 s of a report (see workbench.jupyter.notebooks)
    pio.renderers.default = "plotly_mimetype+notebook"
    return False


def fmt_table(df: pd.DataFrame, digits: int = 2) -> str:
    """A DataFrame as plain HTML with rounded numbers (no JavaScript, renders in any export)."""
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = out[c].map(lambda x: "–" if pd.isna(x) else f"{x:,.{digits}f}")
    return out.to_html(index=False, border=0, classes="wb-table", na_rep="–")


TABLE2 = {"config": "configuration", "partial": "partial %", "partial_ci": "partial 95 % CI", "full_rate": "full %",
          "full_ci": "full 95 % CI", "tasks": "tasks (n)", "outcomes": "outcomes (n)", "refusal_rate": "refusal %",
          "modeling_share": "modeling, % of phase", "execution_share": "execution, % of phase",
          "validation_share": "validation, % of phase", "turns": "turns",
          "turns_trimmed": "turns (trimmed)", "hours": "hours", "tokens": "tokens (M)", "cost_usd": "cost $",
          "provisional": "awaiting review", "refused_no_fallback": "refused", "missing": "missing",
          "withheld": "withheld"}
BOUNDED = {"partial": "partial_upper", "full_rate": "full_rate_upper"}  # lower bound -> upper bound


def with_intervals(df: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """Each ``X_ci_low`` / ``X_ci_high`` pair as one column ``X 95 % CI`` (``[low, high]``, ``–`` where there
    is none), right after the column it is the interval of (``X``, ``X_rate`` or ``mean_X``)."""
    from .uncertainty import interval

    out = df.copy()
    for low in [c for c in df.columns if c.endswith("_ci_low")]:
        stem, high = low.removesuffix("_ci_low"), low.replace("_ci_low", "_ci_high")
        out[f"{stem} 95 % CI"] = [interval(a, b, digits) for a, b in zip(df[low], df[high], strict=True)]
        out = out.drop(columns=[low, high])
        cols = [c for c in out.columns if c != f"{stem} 95 % CI"]
        anchor = next((c for c in (stem, f"{stem}_rate", f"mean_{stem}") if c in cols), cols[-1])
        cols.insert(cols.index(anchor) + 1, f"{stem} 95 % CI")
        out = out[cols]
    return out


def _bounds(low: float, high: float, bounded: bool, digits: int) -> str:
    """``45.20`` or, while outcomes await review, ``45.20 [45.20, 51.00]`` (lower and upper bound)."""
    if pd.isna(low):
        return "–"
    text = f"{low:,.{digits}f}"
    return f"{text} [{text}, {high:,.{digits}f}]" if bounded and pd.notna(high) else text


def table2(table: pd.DataFrame, digits: int = 2) -> str:
    """The configuration table as readers want it: named columns, tokens in millions, the model column
    only where it differs from the configuration name, ``who`` (person or agent) where people are among the
    configurations, and partial score and full rate with their
    bounds [lower, upper] where a configuration has outcomes awaiting review, each beside its 95 % interval
    over tasks (cluster bootstrap, :mod:`.uncertainty`) and the number of tasks behind it."""
    from .uncertainty import interval

    t = table.assign(tokens=table["tokens"] / 1e6)
    for name, col in (("partial_ci", "partial"), ("full_ci", "full_rate")):
        t[name] = [interval(lo, hi) for lo, hi in zip(t[f"{col}_ci_low"], t[f"{col}_ci_high"], strict=True)]
    for low, high in BOUNDED.items():
        t[low] = [_bounds(lo, hi, n > 0, digits) for lo, hi, n in zip(t[low], t[high], t["provisional"], strict=True)]
    cols = list(TABLE2)
    if (t["model"].notna() & (t["model"] != t["config"])).any():
        cols.insert(1, "model")
    if "who" in t and (t["who"] == "person").any():  # people beside models: say which is which
        cols.insert(1, "who")
    return fmt_table(t[cols].rename(columns=TABLE2 | {"model": "model"}), digits=digits)


WITHHELD_LISTED = 200  # the banner lists at most this many withheld outcomes: its size must not grow with a study


def _withheld_note(outcomes: pd.DataFrame) -> str:
    """How many outcomes are withheld, of which kind, per configuration, and each one by trial."""
    from .metrics import withheld

    w = withheld(outcomes)
    if w.empty:
        return ""
    kinds = w["reason"].str.startswith("infrastructure").value_counts()
    per_config = ", ".join(f"{html.escape(str(c))} {n}" for c, n in w["config"].value_counts().sort_index().items())
    rows = fmt_table(w.head(WITHHELD_LISTED).astype({"attempt": "Int64"}))
    what = "the withheld outcomes" if len(w) <= WITHHELD_LISTED else (
        f"the withheld outcomes: the first {WITHHELD_LISTED} of {len(w)} (every one is in the executed notebook's "
        f"<code>report</code> glue, and <code>workbench.analysis.metrics.withheld</code> lists them)")
    return (f"{len(w)} outcome(s) withheld, not counted in any number below: {kinds.get(True, 0)} by "
            f"infrastructure errors (rerun them), {kinds.get(False, 0)} needing rescoring (a leaf or the sota "
            f"evaluator was withheld after a judge or workbench failure). By configuration: {per_config}."
            f"<details{' open' if len(w) <= 20 else ''}><summary>{what}</summary>{rows}</details>")


def merged_runs(runs: list[Path], outcomes: pd.DataFrame) -> str:
    """Which run directories the report read, their configurations, and how many outcomes each gave (an
    outcome in several runs is taken from the latest finished one)."""
    from .frames import run_configs

    used = outcomes["run"].value_counts() if "run" in outcomes else pd.Series(dtype=int)
    rows = pd.DataFrame([{"run": r.name, "directory": str(r), "configurations": ", ".join(sorted(run_configs(r))),
                          "outcomes used": int(used.get(r.name, 0))} for r in runs])
    return f"<details open><summary>Runs merged ({len(runs)})</summary>{fmt_table(rows)}</details>"


def banner(runs_dir: str | Path, outcomes: pd.DataFrame) -> str:
    """What the report covers, and what a reader must know before trusting its numbers."""
    from .frames import run_dirs
    from .synthetic import is_synthetic

    runs = run_dirs(runs_dir)
    states = outcomes["state"].value_counts().to_dict() if len(outcomes) else {}
    notes = []
    if any(is_synthetic(r) for r in runs):
        notes.append("<b>SYNTHETIC DATA</b>: generated by <code>workbench.analysis.synthetic</code> "
                     "for demonstration; these are not results of any model.")
    if states.get("provisional"):
        notes.append(f"{states['provisional']} outcome(s) still await review: counted with the R earned so far "
                     "(a lower bound); Table 2 shows partial score and full rate as <i>value [lower, upper]</i>, "
                     "upper if every waiting leaf passes.")
    if len(outcomes) and (note := _withheld_note(outcomes)):
        notes.append(note)
    missing = states.get("missing", 0) + states.get("unfinished", 0)
    if missing:
        notes.append(f"{missing} outcome(s) missing or unfinished: counted 0 (PaperBenchX §4.1).")
    n_cfg = outcomes["config"].nunique() if len(outcomes) else 0
    n_task = outcomes["task"].nunique() if len(outcomes) else 0
    head = (f"<p>{len(outcomes)} outcomes: {n_cfg} configuration(s) × {n_task} task(s), from "
            f"{len(runs)} run(s) ({html.escape(', '.join(r.name for r in runs))}); built "
            f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.</p>" + merged_runs(runs, outcomes))
    style = "border-left:4px solid #E45756;padding:0.3em 0.8em;background:#fff4f4"
    return head + "".join(f"<div style='{style}'>{n}</div>" for n in notes)


def build_report(runs_dir: Path | str, out: Path | str, *, title: str | None = None, static: bool = False,
                 trajectories_per_config: int = 50) -> Path:
    """Execute the overview for ``runs_dir`` and write ``out`` (HTML) plus the executed notebook beside it.

    The overview covers batch runs and has a section for discovery runs beside them; a directory of discovery
    runs only gets that section as a report of its own (``notebooks/analysis/discovery.ipynb``).

    Args:
        runs_dir: a run, or a directory of runs (batch runs, discovery runs or both).
        out: the HTML file; the executed notebook is written beside it (``.ipynb``).
        title: the report's title (default: the directory's name).
        static: matplotlib PNGs instead of interactive plotly.
        trajectories_per_config: the time-allocation figure samples at most this many trajectories per
            configuration.

    Returns:
        The HTML file written.
    """
    from ..discovery.records import find_runs
    from ..jupyter.notebooks import execute_notebook
    from .frames import check_configurations, run_dirs

    runs_dir, out = Path(runs_dir).resolve(), Path(out)
    runs = run_dirs(runs_dir)
    if not runs and find_runs(runs_dir):
        title = title or f"Discovery runs: {runs_dir.name}"
        executed = execute_notebook(DISCOVERY, out.with_suffix(".ipynb"), {
            "runs_dir": str(runs_dir), "title": title, "static": static})
        return export_html(executed, out, title)
    if not runs:
        raise WorkbenchError(f"{runs_dir}: no runs found (a run directory holds trials/ or results.db; a "
                             "discovery run, discovery.json)")
    check_configurations(runs)  # before the notebook runs: one line, not a notebook's traceback
    title = title or f"Results: {runs_dir.name}"
    executed = execute_notebook(OVERVIEW, out.with_suffix(".ipynb"), {
        "runs_dir": str(runs_dir), "title": title, "static": static,
        "trajectories_per_config": trajectories_per_config})
    return export_html(executed, out, title)


WIDGET_NOTE = ("<div style='color:#666;font-style:italic'>[an interactive widget: open the notebook in "
               "JupyterLab to use it]</div>")


def _offline(output: dict) -> dict:
    """A widget view becomes a short note: its live state needs a kernel and a CDN script."""
    data = output.get("data", {})
    if "application/vnd.jupyter.widget-view+json" in data:
        output = {**output, "data": {"text/html": WIDGET_NOTE}}
    return output


def notebook_html(executed: Path, title: str, *, code: bool = False) -> str:
    """An executed notebook as one self-contained HTML page that renders offline: the lab template,
    plotly.js embedded once by the figures, CDN scripts (require.js, MathJax) removed, scrapbook's
    glue dropped; code cells shown only when ``code`` (the tour and `workbench view` show them)."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(executed, as_version=4)
    nb.metadata.pop("widgets", None)  # its presence makes nbconvert fetch a widget renderer from a CDN
    for cell in nb.cells:  # scrapbook's glue is data for programs, not for readers
        cell["outputs"] = [_offline(o) for o in cell.get("outputs", [])
                           if not any("scrapbook" in k for k in o.get("data", {}))]
    exporter = HTMLExporter(template_name="lab", exclude_input=not code, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    return REMOTE_SCRIPT.sub("", body)


def export_html(executed: Path, out: Path, title: str, *, code: bool = False) -> Path:
    """:func:`notebook_html` written to ``out`` (atomically)."""
    body = notebook_html(executed, title, code=code)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(out)
    return out
