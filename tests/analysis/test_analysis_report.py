"""The report over a study-sized generated index: 930 outcomes x 40 leaves, 10 configurations, 12 fields."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ARTIFACTS, run_cli
from workbench.analysis import frames, metrics
from workbench.analysis.synthetic import synthesize

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    counts = synthesize(root / "runs" / "study", configs=10, tasks=93, leaves=40, fields=12, seed=1)
    return root / "runs", counts


@pytest.fixture(scope="module")
def report(study):
    runs, _ = study
    out = runs.parent / "reports" / "study.html"
    proc = run_cli("report", str(runs), "--out", str(out), "--title", "Study")
    assert proc.returncode == 0, proc.stderr
    return out


def test_the_generated_index_has_the_shape_of_a_study(study):
    runs, counts = study
    index = frames.load_index(runs, tables=("trials", "leaf_scores"))
    o = frames.outcomes(index["trials"])
    assert len(o) == 930 and o.config.nunique() == 10 and o.field.nunique() >= 6
    assert counts["leaf_scores"] >= 900 * 35 and len(index["leaf_scores"]) == counts["leaf_scores"]
    assert set(o.state) >= {"final", "provisional", "needs_rescoring", "infra_error", "missing", "refused"}
    table = metrics.model_table(o)
    assert len(table) == 10 and table.partial.between(0, 100).all() and (table.partial_upper >= table.partial).all()
    assert (table.partial_upper > table.partial).any() and (table.full_rate_upper >= table.full_rate).all()
    assert metrics.sota_summary(o)["withheld"].sum() > 0  # withheld evaluator results, shown as such


def test_the_report_is_built_from_an_executed_notebook(report):
    import scrapbook

    html = report.read_text()
    assert "SYNTHETIC DATA" in html and "Configurations (Table 2)" in html and "model-A" in html
    assert html.count('class="plotly-graph-div"') >= 6
    assert "<script src=\"http" not in html  # self-contained: nothing to fetch
    scraps = scrapbook.read_notebook(str(report.with_suffix(".ipynb"))).scraps["report"].data
    assert scraps["outcomes"] == 930 and len(scraps["configs"]) == 10 and scraps["fields"] >= 6
    assert scraps["states"]["infra_error"] > 0 and scraps["states"]["needs_rescoring"] > 0  # withheld, shown
    withheld = scraps["states"]["infra_error"] + scraps["states"]["needs_rescoring"]
    assert f"{withheld} outcome(s) withheld" in html and len(scraps["withheld"]) == withheld
    assert all(f"<td>{trial}</td>" in html for trial in scraps["withheld"])  # each one listed
    assert re.search(r"<td>\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]</td>", html)  # provisional bounds in Table 2
    time = scraps["time"]  # where a trial's time goes, scoring split into checks, judge and the rest
    assert "Where a trial&#39;s time goes" in html or "Where a trial's time goes" in html
    assert len(time) == 10 and all(t["checks"] > 0 and t["judge calls"] >= 0 and t["scoring"] > t["checks"]
                                   for t in time.values())


def test_a_static_report_is_small_and_needs_no_javascript(study, tmp_path):
    runs, _ = study
    out = tmp_path / "static.html"
    proc = run_cli("report", str(runs), "--out", str(out), "--static")
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert "plotly-graph-div" not in html and html.count("data:image/png;base64") >= 6
    assert 'alt="Mean R (%) by configuration and field, hardest field first"' in html
    assert out.stat().st_size < 2_000_000


def test_report_refuses_a_directory_without_runs(tmp_path):
    proc = run_cli("report", str(tmp_path), "--out", str(tmp_path / "x.html"))
    assert proc.returncode == 1 and "no runs found" in proc.stderr and not (tmp_path / "x.html").exists()


@pytest.mark.browser
def test_the_report_renders_offline_in_chromium_with_visible_figures(report, browser):
    requested = []
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:"))
               else (requested.append(r.request.url), r.abort()))
    page.goto(report.as_uri())
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
    boxes = [page.locator(".js-plotly-plot").nth(i).bounding_box()
             for i in range(page.locator(".js-plotly-plot").count())]
    heat_cells = page.locator(".js-plotly-plot .heatmaplayer image, .js-plotly-plot .hm image").count()
    bars = page.locator(".js-plotly-plot .bars path").count()
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    assert requested == []  # renders offline: no request left the file
    assert len(boxes) >= 6 and all(b and b["width"] > 400 and b["height"] > 200 for b in boxes)
    assert heat_cells >= 1 and bars >= 20


@pytest.mark.slow
def test_the_report_of_a_real_batch(demo_batch, tmp_path):
    """What `make demo` does after the demo run: the report of real trials (demo task x oracle, nop x 2)."""
    run, _ = demo_batch
    out = tmp_path / "demo.html"
    proc = run_cli("report", str(run), "--out", str(out), "--static")
    assert proc.returncode == 0, proc.stderr
    import scrapbook

    scraps = scrapbook.read_notebook(str(out.with_suffix(".ipynb"))).scraps["report"].data
    # no judge: the oracle's two judge leaves await review; the nop's are all decided, since its failed root gates
    # (no PySCF process wrote anything) zero every other leaf, the pending ones included
    assert scraps["outcomes"] == 4 and scraps["states"] == {"final": 2, "provisional": 2}
    assert scraps["configs"]["nop"]["partial"] == 0 and scraps["configs"]["oracle"]["full_rate"] == 100
    oracle = scraps["time"]["oracle"]  # from the trials' own scores.json and stage timings
    assert oracle["checks"] > 0 and oracle["scoring"] >= oracle["checks"] and oracle["judge calls"] == 0
    assert oracle["session"] > 0 and oracle["replay"] > 0
    html = out.read_text()
    assert "computational chemistry" in html and "SYNTHETIC" not in html and "2 outcome(s) still await review" in html
    # each mean beside its interval and the n behind it: one task, so no interval over tasks ("–")
    table = html[html.index("partial 95 % CI"):]
    assert "tasks (n)" in table and "outcomes (n)" in table
    assert "How sure these numbers are" in html and "full@k %" in html


def test_interactive_figures_cost_the_kernel_no_iri_grammars():
    """plotly's notebook renderer imports nbformat and so jsonschema, which compiles rfc3987_syntax's
    grammars (~1.4 s of every interactive report) when nothing stops it."""
    import subprocess
    import sys

    probe = ("import sys; from workbench.analysis.report import setup_plotly; setup_plotly(False); "
             "print('nbformat' in sys.modules, sys.modules.get('rfc3987_syntax', 'absent'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.stdout.split() == ["True", "None"], out.stderr
