"""The report of a small study, as a first run gives: figures a reader can read, the runs it merged named,
and no silent merge of two different configurations that share a name."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ARTIFACTS, run_cli
from tests.review import conftest as _review
from workbench.analysis.synthetic import synthesize

pytestmark = pytest.mark.slow

_scored_run, review_run = _review._scored_run, _review.review_run  # a run of real trials, as fixtures here
MIN_BAR_PX = 12  # thickness of every drawn bar
MIN_PLOT_PX = 150  # height of every figure's plotting area


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("small")
    synthesize(root / "runs" / "first", configs=2, tasks=3, leaves=6, fields=2, seed=3)
    out = root / "small.html"
    proc = run_cli("report", str(root / "runs"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


MEASURE = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  const bar = (gd.data || []).find(t => t.type === 'bar');
  const thick = [...gd.querySelectorAll('.bars .point path')]  /* the bars, not their error bars */
    .map(p => p.getBoundingClientRect()).filter(b => b.width > 0.5 && b.height > 0.5)
    .map(b => bar && bar.orientation === 'h' ? b.height : b.width);
  const area = gd.querySelector('.nsewdrag').getBoundingClientRect();
  return {title: (gd.layout.title && gd.layout.title.text) || '', plot: area.height, bars: thick.length,
          thinnest: thick.length ? Math.min(...thick) : null};
})"""


@pytest.mark.browser
def test_the_figures_of_a_small_study_are_readable(small_report, browser):
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(small_report.as_uri())
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
    figures = page.evaluate(MEASURE)
    page.screenshot(path=str(ARTIFACTS / "report_small.png"), full_page=True)
    assert len(figures) >= 5 and sum(f["bars"] for f in figures) >= 6
    for f in figures:
        assert f["plot"] >= MIN_PLOT_PX, f
        assert f["thinnest"] is None or f["thinnest"] >= MIN_BAR_PX, f
    scores = next(f for f in figures if f["title"].startswith("Partial score"))
    assert scores["bars"] >= 2 and scores["thinnest"] >= 30  # two configurations: thick bars, not slivers


def test_the_report_names_the_runs_it_merged(tmp_path):
    synthesize(tmp_path / "runs" / "spring", configs=2, tasks=2, leaves=6, fields=1, seed=1)
    synthesize(tmp_path / "runs" / "autumn", configs=2, tasks=2, leaves=6, fields=1, seed=2)
    out = tmp_path / "r.html"
    proc = run_cli("report", str(tmp_path / "runs"), "--out", str(out), "--static")
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert "Runs merged" in html
    for run in ("spring", "autumn"):
        assert f"<td>{run}</td>" in html and f"<td>{tmp_path / 'runs' / run}</td>" in html


def _rename_models(run_dir, model: str) -> None:
    """Record the run's configurations as `workbench run` does, with another model behind the same name."""
    data = json.loads((run_dir / "run.json").read_text())
    data["configs"] = {n: {"name": n, "agent": "openai", "model": model} for n in ("model-A", "model-B")}
    (run_dir / "run.json").write_text(json.dumps(data))


def test_the_report_refuses_two_configurations_that_share_a_name(tmp_path):
    runs = tmp_path / "runs"
    synthesize(runs / "spring", configs=2, tasks=2, leaves=6, fields=1, seed=1)
    synthesize(runs / "autumn", configs=2, tasks=2, leaves=6, fields=1, seed=2)
    _rename_models(runs / "spring", "gpt-x")
    _rename_models(runs / "autumn", "gpt-x")
    out = tmp_path / "r.html"
    assert run_cli("report", str(runs), "--out", str(out), "--static").returncode == 0  # the same: merged

    _rename_models(runs / "autumn", "gpt-y")
    proc = run_cli("report", str(runs), "--out", str(tmp_path / "r2.html"), "--static")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr
    assert "configuration 'model-A'" in lines[0] and "autumn" in lines[0] and "spring" in lines[0]
    assert "model" in lines[0] and not (tmp_path / "r2.html").exists()
    # one run alone is reported as it is
    assert run_cli("report", str(runs / "autumn"), "--out", str(tmp_path / "r3.html"), "--static").returncode == 0


def test_configurations_of_runs_without_run_json_come_from_their_trials(review_run):
    from workbench.analysis.frames import run_configs

    (review_run / "run.json").unlink(missing_ok=True)
    configs = run_configs(review_run)
    assert set(configs) == {"oracle", "nop"} and configs["oracle"]["agent"] == "oracle"
