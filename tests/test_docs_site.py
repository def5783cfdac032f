"""The documentation site builds (warnings are errors, as `make docs` runs it) and reads offline in a real
browser from file://: the front page lists the topic pages, and the API page documents run_trial's
parameters from its docstring (the names are lazy, so this is the check that the generated page is not empty)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ARTIFACTS, REPO, required_tool_missing

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built from docs/ into a fresh folder, exactly as `make docs` builds it."""
    try:
        import myst_parser  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError:
        required_tool_missing("sphinx and myst-parser (pip install -e '.[docs]'; make docs installs them)")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html",
                           str(REPO / "docs"), str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _offline_page(browser, requests):
    """A page that records every request leaving file:// and refuses it (the site must need none)."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            requests.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return page


def _toctree_titles() -> list[str]:
    """The titles (first heading) of the pages docs/index.md's toctrees list."""
    index = (REPO / "docs" / "index.md").read_text()
    names = re.findall(r"^([\w-]+)$", "\n".join(re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)), re.M)
    titles = []
    for name in names:
        page = REPO / "docs" / f"{name}.md"
        text = page.read_text() if name != "security" else (REPO / "SECURITY.md").read_text()
        titles.append(re.search(r"^# (.+)$", text, re.M).group(1).replace("`", ""))
    return titles


def test_the_front_page_lists_every_topic_page_offline(site, browser):
    requests: list[str] = []
    page = _offline_page(browser, requests)
    page.goto((site / "index.html").as_uri())
    page.get_by_role("heading", name="workbench", exact=False).first.wait_for()
    listed = page.locator("article .toctree-wrapper a").all_inner_texts()
    titles = _toctree_titles()
    assert len(titles) >= 15 and listed == titles
    assert {"Quickstart: the demo, a trial, review and a report", "API reference"} <= set(listed)
    page.screenshot(path=str(ARTIFACTS / "docs_front.png"), full_page=True)
    page.get_by_role("link", name="Writing a task").first.click()  # the links work, offline
    page.get_by_role("heading", name="Task packages").first.wait_for()
    assert requests == []


def test_the_api_page_shows_run_trials_parameters(site, browser):
    requests: list[str] = []
    page = _offline_page(browser, requests)
    page.goto((site / "api.html").as_uri() + "#workbench.run_trial")
    entry = page.locator("dl:has(> dt[id='workbench.run_trial'])")
    signature = entry.locator("dt").first.inner_text()
    assert re.search(r"run_trial\(\s*task: Task, config: AgentConfig, out: Path", signature), signature
    body = entry.locator("dd").first.inner_text()
    # napoleon turned the Args: and Returns: sections into fields (the theme sets their names in capitals)
    assert {"parameters", "returns"} <= set(body.lower().replace(":", "").split())
    for parameter in ("task", "config", "out", "attempt", "sandbox", "judge"):
        assert re.search(rf"^{parameter} [–-] ", body, re.M), f"{parameter} is not documented:\n{body}"
    entry.screenshot(path=str(ARTIFACTS / "docs_api.png"))  # run_trial's entry: signature, parameters, returns
    import workbench

    documented = page.locator("dl.py > dt[id^='workbench.']").evaluate_all("(dts) => dts.map(d => d.id)")
    assert set(documented) >= {f"workbench.{name}" for name in workbench.__all__}
    assert requests == []
