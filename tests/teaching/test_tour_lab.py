"""The tour as a newcomer meets it: opened in JupyterLab in a real browser and run with Run All Cells."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from tests.conftest import ARTIFACTS, REPO, free_port, http_server
from workbench.teaching.tour import TOUR

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.heavy]


@pytest.fixture
def lab(tmp_path, demo_task):
    """JupyterLab on a copy of the notebooks directory (so checkpoints and runs stay out of the repo)."""
    (tmp_path / "notebooks").mkdir()
    shutil.copy(TOUR, tmp_path / "notebooks" / "tour.ipynb")
    (tmp_path / "tasks").symlink_to(REPO / "tasks")
    port, token = free_port(), "tour-test"
    argv = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--allow-root",
            f"--ServerApp.token={token}", f"--ServerApp.root_dir={tmp_path}", "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    base = f"http://127.0.0.1:{port}"
    with http_server(argv, f"{base}/api/status?token={token}",
                     env={**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter")}):
        yield f"{base}/lab/tree/notebooks/tour.ipynb?token={token}", tmp_path


def test_the_tour_opens_in_jupyterlab_and_runs_all_cells(lab, browser):
    url, root = lab
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.get_by_role("heading", name="A guided tour of the workbench").first.wait_for(timeout=60_000)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=60_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    page.get_by_text("3 trials: {'skipped': 0, 'complete': 3}").wait_for(timeout=240_000)
    stderr = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
    errors = page.locator(stderr).all_inner_texts()
    assert not [e for e in errors if "Traceback" in e or "Error" in e], errors
    page.screenshot(path=str(ARTIFACTS / "tour_lab.png"))
    assert (root / "runs" / "tour" / "batch" / "results.db").is_file()  # the defaults resolved from notebooks/
