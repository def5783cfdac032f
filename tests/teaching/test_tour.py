"""The guided tour runs top to bottom (any cell error fails this test) and renders offline."""

from __future__ import annotations

import json
import re

import pytest

from workbench.teaching.tour import TOUR, build_tour


def test_the_tour_defaults_work_from_the_notebooks_directory():
    nb = json.loads(TOUR.read_text())
    params = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    src = "".join(params["source"])
    task_dir = re.search(r'task_dir = "([^"]+)"', src).group(1)
    assert (TOUR.parent / task_dir / "task.toml").is_file()  # what JupyterLab resolves when the tour opens
    assert all(c["outputs"] == [] for c in nb["cells"] if c["cell_type"] == "code")  # committed unexecuted


@pytest.mark.slow
def test_the_tour_runs_top_to_bottom_and_renders_offline(demo_task, tmp_path):
    html_path = build_tour(tmp_path / "tour.html", work_dir=tmp_path / "runs")  # raises on any cell error
    nb = json.loads((tmp_path / "tour.ipynb").read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                     for o in outputs)
    oracle = float(re.search(r"oracle\s+delivery delivered\s+replay succeeded\s+R = ([0-9.]+)", text).group(1))
    invalid = float(re.search(r"invalid\s+delivery delivered\s+replay succeeded\s+R = ([0-9.]+)", text).group(1))
    assert oracle > 0.9 and invalid < 0.3  # the good and the fake submission, told apart by the rubric
    assert "3 trials: {'skipped': 0, 'complete': 3}" in text
    html = html_path.read_text()
    assert "A leaf that separates them most" in html
    assert html.count("effective weight</th>") == 2  # the reviewer's snapshot of that leaf, invalid and oracle
    assert not re.search(r"<script[^>]+src=[\"']https?://", html) and "unpkg.com" not in html  # offline
    assert all('alt="' in img for img in re.findall(r"<img[^>]*>", html))
    assert (tmp_path / "runs" / "batch" / "results.db").is_file()  # the tour wrote where it was told
