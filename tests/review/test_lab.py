"""`workbench lab`: JupyterLab on a run in a real browser (Debian's chromium), the review notebook run as is,
a review set through its widget; and the notebooks this repository ships, stored so that opening them in
JupyterLab changes nothing."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import ARTIFACTS, REPO, as_in_a_terminal, free_port
from tests.review.conftest import ORACLE_R, SIXTH, _scored_run, review_run, trial  # noqa: F401 (fixtures)

SHIPPED = sorted((REPO / "notebooks").rglob("*.ipynb"))


def _git_status() -> str:
    return subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(REPO)) for p in SHIPPED])
def test_a_shipped_notebook_is_stored_as_jupyterlab_would_keep_it(path):
    """Current nbformat, a cell id on every cell, no outputs or execution counts, no run-specific metadata:
    opening it (or running papermill over it) has nothing to add."""
    import nbformat

    nb = json.loads(path.read_text())
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    nbformat.validate(nbformat.from_dict(nb))
    assert set(nb["metadata"]) <= {"kernelspec", "language_info"} and nb["metadata"]["kernelspec"]["name"] == "python3"
    for cell in nb["cells"]:
        assert cell.get("id"), cell
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, cell["source"][:80]
        assert set(cell["metadata"]) <= {"tags"}, cell["metadata"]


def test_the_lab_copies_the_reviewer_and_the_analysis_into_the_run_parameterized(review_run):  # noqa: F811
    from workbench.review.lab import lab_command

    argv, env, page = lab_command(review_run, 8888)
    assert env["WORKBENCH_REVIEW_RUN"] == str(review_run) and page == "/lab/tree/review.ipynb"
    assert "--ServerApp.ip=127.0.0.1" in argv and env["JUPYTER_TOKEN"] not in " ".join(argv)
    review = json.loads((review_run / "review.ipynb").read_text())
    injected = [c for c in review["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1 and 'run_dir = "."' in "".join(injected[0]["source"])
    (review_run / "review.ipynb").write_text("edited")  # a copy there is the user's: kept
    lab_command(review_run, 8888)
    assert (review_run / "review.ipynb").read_text() == "edited" and (review_run / "analysis.ipynb").is_file()


@pytest.mark.browser
def test_an_expert_reviews_a_leaf_in_jupyterlab_and_the_repository_stays_clean(review_run, browser):  # noqa: F811
    from workbench.review.lab import LabServer
    from workbench.store import Store

    before = _git_status()
    server = LabServer(review_run, free_port())
    try:
        assert server.url.startswith("http://127.0.0.1:") and "/lab/tree/review.ipynb?token=" in server.url
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server.url)
        page.get_by_role("heading", name="Leaf review").first.wait_for(timeout=90_000)
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=90_000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        page.wait_for_selector("button.wb-save", timeout=90_000)  # the notebook ran as is: the widget is there
        page.locator(".wb-leaves select").select_option(index=0)
        page.locator(".wb-score button", has_text="1 · met").click()
        page.locator(".wb-reviewer input").fill("Ada")
        page.locator(".wb-comment textarea").fill("checked in JupyterLab")
        page.locator("button.wb-save").click()
        page.wait_for_selector(".wb-message:has-text('saved')", timeout=30_000)
        assert f"R {ORACLE_R:.4f} → {ORACLE_R + SIXTH:.4f}" in page.locator(".wb-message").inner_text()
        page.screenshot(path=str(ARTIFACTS / "lab_review.png"), full_page=True)
        rec = Store.for_run(review_run).reviews_for("run").iloc[0]
        assert (rec.reviewer, rec.leaf_id, rec.score) == ("Ada", "v2", 1.0)
        scores = json.loads((trial(review_run) / "scores.json").read_text())
        assert scores["R"] == pytest.approx(ORACLE_R + SIXTH)
    finally:
        server.stop()
    assert _git_status() == before  # the shipped notebooks were never opened, let alone saved


def test_jupyterlab_without_a_run_refuses_a_directory_that_is_not_one(tmp_path):
    from workbench.errors import WorkbenchError
    from workbench.review.lab import lab_command

    with pytest.raises(WorkbenchError, match="not a run directory"):
        lab_command(tmp_path, 8888)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_workbench_lab_prints_a_url_that_serves_the_run_and_ctrl_c_stops_it(review_run):  # noqa: F811
    import os
    import signal
    import sys
    import urllib.error
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "workbench", "lab", str(review_run), "--port", str(free_port())],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, preexec_fn=as_in_a_terminal)
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"JupyterLab on {review_run} at http://127.0.0.1:") and "(Ctrl-C stops it)" in line
        url = line.split(" at ", 1)[1].split()[0]
        assert "/lab/tree/review.ipynb?token=" in url
        page = urllib.request.urlopen(url, timeout=60).read().decode()
        assert "JupyterLab" in page
        contents = json.loads(urllib.request.urlopen(url.replace("/lab/tree/review.ipynb", "/api/contents"),
                                                     timeout=60).read())
        assert {"review.ipynb", "analysis.ipynb", "trials"} <= {c["name"] for c in contents["content"]}
        untokened = url.split("?")[0].replace("/lab/tree/review.ipynb", "/api/contents")
        with pytest.raises(urllib.error.HTTPError, match="403"):
            urllib.request.urlopen(untokened, timeout=60)
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "JupyterLab stopped" in out
