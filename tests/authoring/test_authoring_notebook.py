"""notebooks/authoring.ipynb: from `task new` to a passing validation, executed top to bottom by papermill."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO

NOTEBOOK = REPO / "notebooks" / "authoring.ipynb"


def test_the_authoring_notebook_is_stored_unexecuted():
    nb = json.loads(NOTEBOOK.read_text())
    assert (nb["nbformat"], nb["nbformat_minor"]) >= (4, 5) and all(c.get("id") for c in nb["cells"])
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.slow
def test_the_authoring_notebook_runs_from_scaffold_to_a_passing_validation(tmp_path):
    import papermill

    out = tmp_path / "authoring.ipynb"
    papermill.execute_notebook(str(NOTEBOOK), str(out), parameters={"work_dir": str(tmp_path / "work")},
                               cwd=str(tmp_path), progress_bar=False)  # raises on any cell error
    text = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                     for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"
                     for o in c.get("outputs", []))
    assert "task check: ok" in text and "filled tests/recompute.py" in text
    assert "replay: succeeded | secret replay: succeeded" in text
    assert "validation passed" in text and "[ ]" not in text
    assert (tmp_path / "work" / "pi" / "tests" / "validation.json").is_file()
