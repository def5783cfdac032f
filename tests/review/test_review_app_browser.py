"""The Voila review app in a real browser: Debian's chromium driven by Playwright's python package."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.conftest import ARTIFACTS, config, free_port, http_server, write_task
from tests.review.conftest import ORACLE_R, REVIEW_RUBRIC, SIXTH, leaves, trial
from workbench.store import Store

pytestmark = pytest.mark.browser


def _serve(run: Path):
    from workbench.review.serve import voila_command

    port = free_port()
    argv, env, url = voila_command(run, port)
    return http_server(argv, url, env=env), url


@pytest.fixture
def review_app(review_run):
    server, url = _serve(review_run)
    with server:
        yield url


def _recording(browser):
    """A page that records every URL it requests (and every websocket it opens)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.requested = []
    page.on("request", lambda r: page.requested.append(r.url))
    page.on("websocket", lambda ws: page.requested.append(ws.url))
    return page


def _assert_offline(page) -> None:
    """Every request went to the reviewer on 127.0.0.1: no CDN fonts, stylesheets or scripts."""
    network = [u for u in page.requested if not u.startswith(("data:", "blob:"))]
    assert network and all(urlparse(u).hostname == "127.0.0.1" for u in network), \
        [u for u in network if urlparse(u).hostname != "127.0.0.1"]


def test_an_expert_reviews_a_leaf_in_the_browser(review_run, review_app, browser):
    page = _recording(browser)
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
    _assert_offline(page)

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


def test_a_source_file_is_previewed_from_its_head_in_a_monospace_font(tmp_path, browser):
    from workbench.task import load_task
    from workbench.trial.pipeline import run_trial

    rubric = copy.deepcopy(REVIEW_RUBRIC)
    rubric["sub_tasks"][2]["sub_tasks"][1]["evidence_inputs"].append({"path": "submission/reproduce.sh"})
    root = write_task(tmp_path / "mini", rubric=rubric)
    with (root / "solution" / "reproduce.sh").open("a") as f:
        f.write("".join(f"# step {i}\n" for i in range(60)))
    run_trial(load_task(root), config("oracle"), tmp_path / "run", engine="inline")
    server, url = _serve(tmp_path / "run")
    with server:
        page = _recording(browser)
        page.goto(url)
        page.wait_for_selector("button.wb-save", timeout=60_000)
        page.locator(".wb-leaves select").select_option(index=0)  # v2: the log and reproduce.sh
        code = page.locator(".wb-evidence pre.wb-code").last
        code.wait_for(timeout=30_000)
        assert code.inner_text().startswith("mkdir -p results") and "# step 0" in code.inner_text()
        assert "first 40 of 63 lines" in page.locator(".wb-evidence").inner_text()
        font = code.evaluate("el => getComputedStyle(el).fontFamily")
        assert "monospace" in font, font
        size, height = code.evaluate("el => [parseFloat(getComputedStyle(el).fontSize), "
                                     "parseFloat(getComputedStyle(el).lineHeight)]")
        assert height < 1.6 * size  # lines read as code, not double-spaced
        body = page.locator(".wb-detail").evaluate("el => getComputedStyle(el).fontFamily")
        assert "monospace" not in body  # only the code is in the code font
        page.screenshot(path=str(ARTIFACTS / "review_code_preview.png"), full_page=True)
        _assert_offline(page)
