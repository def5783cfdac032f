"""Stage notebooks: structure, what the executed copies hold, and start-up without the import tax."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import nbformat
import pytest

from tests.conftest import DEMO, REPO, config, free_port, http_server, write_task
from workbench.jupyter.notebooks import STAGE_NOTEBOOKS, read_scraps
from workbench.paths import RunPaths
from workbench.store import Store
from workbench.task import load_task
from workbench.trial.pipeline import run_trial

STAGE_DIR = REPO / "notebooks" / "stages"


@pytest.mark.parametrize("stage,name", sorted(STAGE_NOTEBOOKS.items()))
def test_stage_notebooks_are_thin_and_parametrized(stage, name):
    nb = nbformat.read(STAGE_DIR / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].metadata.get("tags") == ["parameters"]
    assert "task_dir" in code[0].source and "trial_dir" in code[0].source
    src = "\n".join(c.source for c in code)
    assert f"stages.{stage}(" in src  # one call into the library
    assert f'displays.glue("{stage}", summary)' in src
    assert not any(c.get("outputs") for c in code)  # templates are committed without outputs
    for forbidden in ("import papermill", "import scrapbook", "subprocess", "Popen", "shutil", "rmtree"):
        assert forbidden not in src  # no pipeline logic in notebooks
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.slow
def test_batch_trials_keep_executed_notebooks_that_open_cleanly(demo_batch):
    run, result = demo_batch
    assert result.counts == {"skipped": 0, "complete": 4}
    store = Store.for_run(run)
    assert len(store.trial_ids()) == 4
    leaves = len(load_task(DEMO).rubric.leaves)  # one row per leaf and trial
    assert len(store.frame("leaf_scores")) == 4 * leaves and len(store.frame("stage_timings")) == 4 * 4
    for tid in ("h2-pes__oracle__1", "h2-pes__oracle__2", "h2-pes__nop__1", "h2-pes__nop__2"):
        tp = RunPaths(run).trial(tid)
        for stage, name in STAGE_NOTEBOOKS.items():
            nb = nbformat.read(tp.notebooks / name, as_version=4)
            nbformat.validate(nb)
            assert nb.metadata.kernelspec.name == "python3"  # opens with the user's own kernel
            outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
            assert not [o for o in outputs if o.output_type == "error"]
            assert "injected-parameters" in [t for c in nb.cells for t in c.metadata.get("tags", [])]
            assert stage in read_scraps(tp.notebooks / name)
    # what an expert reads: the phase chart as a PNG and the leaf table, the evidence tree with hashes
    scoring = nbformat.read(RunPaths(run).trial("h2-pes__oracle__1").notebooks / "03_scoring.ipynb", 4)
    mimes = [m for c in scoring.cells for o in c.get("outputs", []) for m in o.get("data", {})]
    assert "image/png" in mimes and mimes.count("text/html") >= 1
    replay_nb = (RunPaths(run).trial("h2-pes__oracle__1").notebooks / "02_clean_replay.ipynb").read_text()
    assert "MANIFEST.sha256" in replay_nb and "PySCF version 2.14.0" in replay_nb


@pytest.mark.slow
def test_executed_notebooks_export_to_html(demo_batch, tmp_path):
    run, _ = demo_batch
    nb = RunPaths(run).trial("h2-pes__oracle__1").notebooks / "03_scoring.ipynb"
    proc = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(nb),
                           "--output-dir", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "03_scoring.html").read_text()
    assert "data:image/png;base64" in html and "Leaves by phase" in html


def _comparable(scores: dict) -> dict:
    return {k: v for k, v in scores.items() if k not in ("scored_at", "timing")}  # when, and how long it took


@pytest.mark.slow
def test_both_engines_give_identical_scores(tmp_path):
    task = load_task(write_task(tmp_path / "mini"))
    out = {}
    for engine in ("inline", "papermill"):
        rec = run_trial(task, config("oracle"), tmp_path / engine, engine=engine)
        tp = RunPaths(tmp_path / engine).trial(rec.id)
        out[engine] = json.loads(tp.scores.read_text())
        assert rec.engine == engine and rec.status == "complete"
        assert tp.notebooks.is_dir() == (engine == "papermill")
    assert _comparable(out["inline"]) == _comparable(out["papermill"])


@pytest.mark.slow
def test_both_engines_agree_on_the_demo_task(demo_batch, demo_oracle_inline):
    run, _ = demo_batch
    inline = copy.deepcopy(demo_oracle_inline)
    paper = json.loads(RunPaths(run).trial("h2-pes__oracle__1").scores.read_text())
    # the demo's log prints timings, so only the evidence digest may differ
    for s in (inline, paper):
        s.pop("scored_at")
        s.pop("timing")
        s["fingerprint"] = {k: v for k, v in s["fingerprint"].items() if k not in ("evidence", "digest")}
        s.pop("evidence_digest")
        for lf in s["leaves"]:  # leaves reading the log: their evidence digest follows it
            lf.pop("evidence_digest")
            # the spot checks' seed and the secret replay's inputs are drawn per run: only the score must agree
            drawn = any(r.startswith("secret/") for r in lf["evidence_refs"])
            if drawn or "[spot-check seed " in (lf["rationale"] or ""):
                lf.pop("rationale")
    differing = {a["id"]: {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
                 for a, b in zip(inline["leaves"], paper["leaves"], strict=True) if a != b}
    assert inline == paper, differing


def test_no_rfc3987_import_tax_in_the_engine_or_the_kernel():
    probe = """
import sys, time
from workbench.trial import displays, stages         # what a stage notebook imports in its kernel
kernel_side = "jsonschema" in sys.modules
from workbench.jupyter.notebooks import _import_papermill
_import_papermill()
print(kernel_side, sys.modules.get("rfc3987_syntax") is None, "jsonschema" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.split() == ["False", "True", "True"], out.stderr


@pytest.mark.slow
def test_a_jupyter_server_opens_the_executed_notebooks(demo_batch):
    """What JupyterLab does when a notebook is opened: the server loads and validates it."""
    import urllib.request

    run, _ = demo_batch
    port = free_port()
    argv = [sys.executable, "-m", "jupyter", "server", "--no-browser", "--allow-root", f"--port={port}",
            "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=t0k", f"--ServerApp.root_dir={run}"]
    with http_server(argv, f"http://127.0.0.1:{port}/api/status?token=t0k"):
        for name in STAGE_NOTEBOOKS.values():
            url = f"http://127.0.0.1:{port}/api/contents/trials/h2-pes__oracle__1/notebooks/{name}?token=t0k"
            model = json.loads(urllib.request.urlopen(url, timeout=10).read())
            assert model["type"] == "notebook" and model["format"] == "json"
            assert model.get("message") is None  # the server reports validation problems here
            assert model["content"]["metadata"]["kernelspec"]["name"] == "python3"
