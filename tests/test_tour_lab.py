"""The tour as a newcomer meets it: opened in JupyterLab in a real browser and run with Run All Cells."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import REPO, free_port, required_tool_missing
from workbench.tour import TOUR

pytestmark = [pytest.mark.browser, pytest.mark.slow]
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]


@pytest.fixture
def lab(tmp_path, demo_task):
    """JupyterLab on a copy of the notebooks directory (so checkpoints and runs stay out of the repo)."""
    (tmp_path / "notebooks").mkdir()
    shutil.copy(TOUR, tmp_path / "notebooks" / "tour.ipynb")
    (tmp_path / "tasks").symlink_to(REPO / "tasks")
    port, token = free_port(), "tour-test"
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--allow-root",
                             f"--ServerApp.token={token}", f"--ServerApp.root_dir={tmp_path}",
                             "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter")})
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"jupyter lab did not start: {proc.stderr.read()[-2000:]}")
            time.sleep(0.3)
    yield f"{base}/lab/tree/notebooks/tour.ipynb?token={token}", tmp_path
    proc.terminate()
    proc.wait(20)


def test_the_tour_opens_in_jupyterlab_and_runs_all_cells(lab):
    url, root = lab
    chromium = shutil.which("chromium")
    if not chromium:
        required_tool_missing("chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
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
        (REPO / "test-artifacts").mkdir(exist_ok=True)
        page.screenshot(path=str(REPO / "test-artifacts" / "tour_lab.png"))
        browser.close()
    assert (root / "runs" / "tour" / "batch" / "results.db").is_file()  # the defaults resolved from notebooks/
