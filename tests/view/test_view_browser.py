"""`workbench view` in a real browser (Debian's chromium, Playwright): from the run list into a trial and
into the Voila reviewer for one leaf; the list follows a batch without a reload; nothing is fetched from
anywhere but the view."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import ARTIFACTS, REPO, free_port, http_server
from tests.review.conftest import trial
from tests.view.conftest import add_complete_trial, add_running_trial, holding_lock, make_batch

pytestmark = pytest.mark.browser


def test_from_the_run_list_into_a_trial_and_into_the_reviewer(review_run, browser):
    from workbench.review.serve import voila_command
    from workbench.view.server import ViewServer

    (trial(review_run) / "notebooks").mkdir()  # as the papermill engine leaves them (unexecuted here)
    shutil.copy(REPO / "notebooks" / "stages" / "03_scoring.ipynb", trial(review_run) / "notebooks")
    port = free_port()
    argv, env, review_url = voila_command(review_run, port)
    with http_server(argv, review_url, env=env):
        server = ViewServer(review_run.parent, review_url=review_url, poll_seconds=1)
        server.start()
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            requested: list[str] = []
            page.on("request", lambda r: requested.append(r.url))
            page.goto(server.url)
            page.locator("tr[data-trial='mini__oracle__1'] a").click()
            page.wait_for_selector("h1.trial-id:has-text('mini__oracle__1')")
            rows = page.locator("tr.leaf").evaluate_all("rows => rows.map(r => r.dataset.leaf)")
            assert rows == ["m1", "e1", "v1", "v2", "v3"]  # by phase: modeling, execution, validation
            assert page.locator("table.leaves[data-phase='validation'] tr.leaf").count() == 3
            v1 = page.locator("tr[data-leaf='v1']").inner_text()
            assert "scored" in v1 and "1.00" in v1
            log = page.locator("tr[data-path='submission/results/log.txt']")
            assert "regenerated" in log.inner_text()
            log.locator("button").click()  # read in the confined reader
            page.wait_for_selector(".preview pre:has-text('fine')", timeout=60_000)
            page.screenshot(path=str(ARTIFACTS / "view_trial.png"), full_page=True)
            assert requested and all(u.startswith(server.base) for u in requested), requested  # offline

            with page.context.expect_page() as opened:
                page.locator("ul.notebooks a", has_text="03_scoring.ipynb").click()
            notebook = opened.value
            notebook.wait_for_selector(".jp-Notebook")
            assert "stages.score(task_dir, trial_dir" in notebook.inner_text("body")  # its code, rendered
            notebook.close()

            with page.context.expect_page() as opened:
                page.locator("tr[data-leaf='v1'] a.review-link").click()
            reviewer = opened.value
            reviewer.wait_for_selector("button.wb-save", timeout=90_000)
            reviewer.wait_for_selector(".wb-detail:has-text('v1')", timeout=30_000)
            detail = reviewer.locator(".wb-detail").inner_text()
            assert "v1" in detail and "scored" in detail  # the leaf the link named, though none awaits it
            chosen = reviewer.locator(".wb-leaves select").evaluate("s => s.options[s.selectedIndex].text")
            assert "v1" in chosen
        finally:
            server.stop()


def test_the_run_list_follows_a_batch_without_a_reload(review_run, view, browser):
    make_batch(review_run)
    add_running_trial(review_run)
    with holding_lock(review_run, "mini__slow__1"):
        page = browser.new_page(viewport={"width": 1300, "height": 650})
        page.goto(view.url)
        assert "running: replay" in page.locator("tr[data-trial='mini__slow__1']").inner_text()
        assert page.locator("tr[data-trial='mini__late__1'] .status-queued").count() == 1
        assert "5 trial(s): 1 running · 2 queued · 2 complete" in page.locator(".progress").inner_text()
        page.screenshot(path=str(ARTIFACTS / "view_runs.png"), full_page=True)
        page.evaluate("window.sameDocument = true")

        add_complete_trial(review_run, "late")  # a trial finishes while the page is open
        page.wait_for_selector("tr[data-trial='mini__late__1'] .status-complete", timeout=15_000)
        assert "1 running · 1 queued · 3 complete" in page.locator(".progress").inner_text()
        assert page.locator("tr[data-trial='mini__late__1'] a").count() == 1  # now it can be opened
        assert page.evaluate("window.sameDocument") is True  # refreshed in place, not reloaded
