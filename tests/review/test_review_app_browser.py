"""The Voila review app in a real browser: Debian's chromium driven by Playwright's python package."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import ARTIFACTS, free_port, http_server
from tests.review.conftest import ORACLE_R, SIXTH, leaves, trial
from workbench.store import Store

pytestmark = pytest.mark.browser


@pytest.fixture
def review_app(review_run):
    from workbench.review.serve import voila_command

    port = free_port()
    argv, env = voila_command(review_run, port)
    url = f"http://127.0.0.1:{port}/"
    with http_server(argv, url, env=env):
        yield url


def test_an_expert_reviews_a_leaf_in_the_browser(review_run, review_app, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.goto(review_app)
    page.wait_for_selector("button.wb-save", timeout=60_000)  # the kernel ran and the widgets rendered
    options = page.locator(".wb-leaves select option").all_inner_texts()
    assert len(options) == 2 and "v2" in options[0]
    page.locator(".wb-leaves select").select_option(index=0)
    assert "an expert reads the log" in page.locator(".wb-detail").inner_text()
    assert "fine" in page.locator(".wb-evidence").inner_text()  # the log's content, previewed
    page.locator(".wb-score button", has_text="1 · met").click()
    page.locator(".wb-reviewer input").fill("Ada")
    page.locator(".wb-comment textarea").fill("checked in the browser")
    page.locator("button.wb-save").click()
    page.wait_for_selector(".wb-message:has-text('saved')", timeout=30_000)
    assert f"R {ORACLE_R:.4f} → {ORACLE_R + SIXTH:.4f}" in page.locator(".wb-message").inner_text()
    page.screenshot(path=str(ARTIFACTS / "review_app.png"), full_page=True)

    rec = Store.for_run(review_run).reviews_for("run").iloc[0]
    assert (rec.reviewer, rec.leaf_id, rec.score, rec.comment) == ("Ada", "v2", 1.0, "checked in the browser")
    scores = json.loads((trial(review_run) / "scores.json").read_text())
    assert scores["R"] == pytest.approx(ORACLE_R + SIXTH) and leaves(trial(review_run))["v2"]["status"] == "reviewed"
    assert Store.for_run(review_run).frame().set_index("trial_id").R["mini__oracle__1"] == pytest.approx(scores["R"])


def test_the_app_refuses_a_directory_that_is_not_a_run(tmp_path):
    from workbench.errors import WorkbenchError
    from workbench.review.serve import voila_command

    with pytest.raises(WorkbenchError, match="not a run directory"):
        voila_command(tmp_path, free_port())
    assert os.environ.get("WORKBENCH_REVIEW_RUN") is None and Path(tmp_path).is_dir()
