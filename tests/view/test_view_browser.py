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


def test_the_run_list_sorts_filters_and_opens_a_grid_cell_into_a_side_by_side_comparison(review_run, browser):
    from workbench.view.server import ViewServer

    server = ViewServer(review_run.parent, poll_seconds=1)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server.url)
        shown = "rows => rows.filter(r => !r.hidden).map(r => r.dataset.trial)"
        trials = page.locator("table.trials tr[data-row]")
        assert trials.evaluate_all(shown) == ["mini__nop__1", "mini__oracle__1"]
        page.locator("#find").fill("oracle")  # search
        assert trials.evaluate_all(shown) == ["mini__oracle__1"]
        page.locator("#find").fill("")
        page.locator("table.trials th", has_text="R").first.click()  # sort by R, ascending, then descending
        page.locator("table.trials th", has_text="R").first.click()
        assert trials.evaluate_all(shown) == ["mini__oracle__1", "mini__nop__1"]
        page.wait_for_timeout(2500)  # a refresh of the list keeps the order
        assert trials.evaluate_all(shown) == ["mini__oracle__1", "mini__nop__1"]
        page.locator("#status-filter").select_option("complete")
        assert len(trials.evaluate_all(shown)) == 2
        cell = page.locator("table.grid td[data-task='mini'][data-config='oracle']")
        assert "n 1" in cell.inner_text() and "full 0%" in cell.inner_text()
        page.screenshot(path=str(ARTIFACTS / "view_runs_grid.png"), full_page=True)
        cell.locator("a").click()
        page.wait_for_selector("table.compare")
        heads = page.locator("table.compare th").all_inner_texts()
        assert "mini__oracle__1" in heads[3] and "mini__nop__1" in heads[4]  # the cell's one attempt, the other
        leaves = page.locator("table.compare tr.leaf")
        assert leaves.evaluate_all("rows => rows.map(r => r.dataset.leaf)") == ["m1", "e1", "v1", "v2", "v3"]
        assert page.locator("table.compare tr.leaf.differs[data-leaf='v1']").count() == 1  # met vs not
        link = page.locator("table.compare tr[data-leaf='v1'] td").nth(3).locator("a")
        assert link.inner_text() == "submission/results/value.json"  # the evidence it was scored on
        page.screenshot(path=str(ARTIFACTS / "view_compare.png"), full_page=True)
        page.locator("select[data-compare='b']").select_option("mini__oracle__1")  # switch a side
        page.wait_for_url("**b=mini__oracle__1**")
        assert page.locator("table.compare tr.leaf.differs").count() == 0
    finally:
        server.stop()


def test_a_persons_session_plays_back_beside_its_trajectory(tmp_path, browser):
    """A person's session (agent human, through a real pty) in the view: the cast plays in the vendored
    terminal, from the view alone, beside the trajectory's steps."""
    import pexpect

    from tests.agents.test_human import PROMPT, REPRODUCE, ran, workbench_run
    from tests.conftest import write_task
    from workbench.view.server import ViewServer

    child = workbench_run(write_task(tmp_path / "mini"), tmp_path / "runs" / "class", "bwrap")
    child.expect(PROMPT, timeout=180)
    ran(child, REPRODUCE)
    ran(child, "bash reproduce.sh && cat results/value.json")
    child.sendline("finish")
    child.expect(pexpect.EOF, timeout=300)
    server = ViewServer(tmp_path / "runs", poll_seconds=1)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto(server.url)
        page.locator("tr[data-trial='mini__human__1'] a").click()
        page.wait_for_selector("#terminal-player[data-state='paused']", timeout=30_000)
        assert "2 step(s)" in page.locator("#trajectory").inner_text()  # the commands, beside the terminal
        page.locator("#terminal-player select.speed").select_option("32")
        page.locator("#terminal-player button.play").click()
        page.wait_for_selector("#terminal-player[data-state='ended']", timeout=60_000)
        shown = page.locator("#terminal-player .xterm-rows").inner_text()
        assert '{"value": 42}' in shown and "session finished" in shown, shown
        assert "7770" not in shown
        page.locator("#terminal-player").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "view_terminal.png"), full_page=True)
        assert requested and all(u.startswith(server.base) for u in requested), requested  # offline
    finally:
        server.stop()


def test_a_student_works_from_the_browser_and_is_scored(tmp_path, browser):
    """A class from a browser: a batch's person's session, attached from `workbench view`'s trial page (the
    view's token, its own origin), typed into with the keyboard, finished, replayed and scored."""
    import json
    import os
    import subprocess
    import sys
    import time

    from tests.conftest import write_task
    from workbench.paths import TrialPaths
    from workbench.view.server import ViewServer

    task = write_task(tmp_path / "mini")
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(f'tasks = ["{task}"]\nattempts = 1\n[[agents]]\nname = "ada"\nagent = "human"\n'
                      'options = { person = "Ada" }\n')
    run = tmp_path / "runs" / "class"
    batch = subprocess.Popen([sys.executable, "-m", "workbench", "batch", str(matrix), "--out", str(run),
                              "--workers", "1", "--engine", "inline"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=dict(os.environ))
    server = ViewServer(tmp_path / "runs", poll_seconds=1)
    server.start()
    tp = TrialPaths(run / "trials" / "mini__ada__1")
    try:
        deadline = time.monotonic() + 120
        while not tp.terminal_door.is_file() and time.monotonic() < deadline:
            time.sleep(0.3)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto(server.url)
        page.goto(f"{server.base.rstrip('/')}/run/class/trial/mini__ada__1")
        page.wait_for_selector("#terminal-live[data-state='attached']", timeout=30_000)
        page.wait_for_selector("#terminal-live .xterm-rows:has-text('left]')", timeout=30_000)
        # without the view's token, nobody types into the session (a local process, another site's page)
        import urllib.error
        import urllib.request

        forged = urllib.request.Request(f"{server.base.rstrip('/')}/run/class/trial/mini__ada__1/terminal/keys",
                                        data=b'{"data": "touch /home/submission/planted\\n"}', method="POST",
                                        headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(forged, timeout=10)
        assert refused.value.code in (401, 403)
        page.locator("#terminal-live .xterm").click()
        page.keyboard.type("printf '%s\\n' 'mkdir -p results' 'echo {\\\"value\\\": 42} > results/value.json' "
                           "'echo fine > results/log.txt' > reproduce.sh && bash reproduce.sh && cat results/*.json\n")
        page.wait_for_selector("#terminal-live .xterm-rows:has-text('{\"value\": 42}')", timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "view_live_terminal.png"))
        page.keyboard.type("finish\n")
        page.wait_for_selector("#terminal-live[data-state='ended']", timeout=60_000)
        assert batch.wait(timeout=300) == 0
        assert all(u.startswith(server.base) for u in requested), requested  # offline
    finally:
        server.stop()
        if batch.poll() is None:
            batch.kill()
    assert json.loads(tp.usage.read_text())["person"]["name"] == "Ada"
    assert not (tp.submission / "planted").exists()
    assert json.loads(tp.scores.read_text())["R"] > 0.5
