"""Warm kernels from the pool: nothing one notebook does reaches the next, and a stage notebook executed
warm says what it says executed cold."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tests.conftest import REPO, config, write_task
from workbench.jupyter.notebooks import STAGE_NOTEBOOKS, execute_notebook
from workbench.paths import RunPaths
from workbench.task import load_task
from workbench.trial.pipeline import run_trial

PLANT = """
import builtins, json, os, sys
import pandas
import workbench.trial.displays
planted = "a variable"
workbench.trial.displays.glue = lambda *a, **k: None          # a module the template imported, patched
pandas.DataFrame.planted = True                          # a class patched
pandas.set_option("display.max_columns", 3)              # a library's global option
builtins.planted = True
os.environ["WB_PLANTED"] = "1"
sys.path.insert(0, "/planted")
sys.modules["planted_module"] = sys
os.chdir(PLANT_DIR)
print(json.dumps({"pid": os.getpid()}))
"""

CHECK = """
import builtins, json, os, sys
import pandas
import workbench.trial.displays
print(json.dumps({"pid": os.getpid(), "cwd": os.getcwd(), "leaks": {
    "variable": "planted" in globals(),
    "module patch": workbench.trial.displays.glue.__module__ != "workbench.trial.displays",
    "class patch": hasattr(pandas.DataFrame, "planted"),
    "library option": pandas.get_option("display.max_columns") == 3,
    "builtin": hasattr(builtins, "planted"),
    "environment": "WB_PLANTED" in os.environ,
    "sys.path": "/planted" in sys.path,
    "sys.modules": "planted_module" in sys.modules,
}}))
"""


def _notebook(path: Path, source: str, **params) -> Path:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"},
                                            "language_info": {"name": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("\n".join(f"{k} = None" for k in params) or "pass",
                                          metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, path)
    return path


def _printed(path: Path) -> dict:
    return json.loads(nbformat.read(path, 4).cells[-1].outputs[0]["text"])


@pytest.mark.slow
def test_state_planted_by_one_notebook_is_not_visible_to_the_next(tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_WARM_KERNELS", raising=False)
    plant = _notebook(tmp_path / "plant.ipynb", PLANT, PLANT_DIR=None)
    check = _notebook(tmp_path / "check.ipynb", CHECK)
    (tmp_path / "elsewhere").mkdir()
    first = _printed(execute_notebook(check, tmp_path / "out0.ipynb", {}, warm=True))
    elsewhere = {"PLANT_DIR": str(tmp_path / "elsewhere")}
    planted = _printed(execute_notebook(plant, tmp_path / "out1.ipynb", elsewhere, warm=True))
    after = _printed(execute_notebook(check, tmp_path / "out2.ipynb", {}, warm=True))
    assert not any(first["leaks"].values())
    assert after["leaks"] == first["leaks"], {k: v for k, v in after["leaks"].items() if v}
    assert after["cwd"] == first["cwd"] == os.getcwd()
    assert len({first["pid"], planted["pid"], after["pid"]}) == 3  # a kernel serves one notebook


@pytest.mark.slow
def test_a_spare_started_before_the_environment_changed_is_not_used(tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_WARM_KERNELS", raising=False)
    probe = _notebook(tmp_path / "probe.ipynb", "import os\nprint(os.environ.get('WB_MARK'))")
    execute_notebook(probe, tmp_path / "a.ipynb", {}, warm=True)  # leaves a spare started without WB_MARK
    monkeypatch.setenv("WB_MARK", "changed")
    out = execute_notebook(probe, tmp_path / "b.ipynb", {}, warm=True)
    assert nbformat.read(out, 4).cells[-1].outputs[0]["text"].strip() == "changed"


KERNEL_PROBE = """
import json, os, signal, sys, warnings
import matplotlib, numpy, pandas
print(json.dumps({
    "arguments": sys.argv[3:], "flags": repr(sys.flags), "warnings": sorted(map(repr, warnings.filters)),
    "path": sys.path,
    "cwd": os.getcwd(), "environment": sorted(set(os.environ) - {"JPY_SESSION_NAME"}),
    "own session": os.getsid(0) == os.getpid(), "stdin": os.readlink("/proc/self/fd/0").split(":")[0],
    "signals": {s.name: repr(signal.getsignal(s))
                for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE)},
    "matplotlib": matplotlib.get_backend(), "pandas": [pandas.get_option(o) for o in
                                                        ("display.max_columns", "display.width", "display.max_rows")],
    "numpy": repr(numpy.get_printoptions()),
}))
"""


@pytest.mark.slow
def test_a_warm_kernel_is_set_up_as_a_cold_one(tmp_path, monkeypatch):
    """Warning filters are compared as a set: the kernel adds one (trio's) at start, after the template
    imported numpy, which a cold kernel imports later; the two match disjoint warnings."""
    probe = _notebook(tmp_path / "probe.ipynb", KERNEL_PROBE)
    seen = {}
    for mode in ("cold", "warm"):
        monkeypatch.setenv("WORKBENCH_WARM_KERNELS", "0" if mode == "cold" else "1")
        seen[mode] = _printed(execute_notebook(probe, tmp_path / f"{mode}.ipynb", {}, warm=True))
    env = [set(seen[m].pop("environment")) for m in ("cold", "warm")]
    assert env[0] == env[1], (env[0] - env[1], env[1] - env[0])
    differ = {k: (seen["cold"][k], seen["warm"][k]) for k in seen["cold"] if seen["cold"][k] != seen["warm"][k]}
    assert not differ, json.dumps(differ, indent=1)[:6000]


_TIMING = [(re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+(\+00:00|Z)?"), "TIME"), (re.compile(r"\b[0-9a-f]{16,}\b"), "HEX"),
           (re.compile(r"\d+\.\d+"), "NUM"), (re.compile(r"[ \t]+"), " ")]


def _content(path: Path, base: Path) -> list[str]:
    """A notebook's cells and outputs, with its trial's path, timings, timestamps and digests masked
    (they differ between any two runs) and the cell ids papermill draws at random dropped."""
    nb = nbformat.read(path, 4)
    cells = []
    for c in nb.cells:
        text = json.dumps({"source": c.source, "outputs": c.get("outputs", []), "count": c.get("execution_count"),
                           "tags": c.metadata.get("tags", [])}, sort_keys=True).replace(str(base), "BASE")
        for pattern, mask in _TIMING:
            text = pattern.sub(mask, text)
        cells.append(text)
    return [json.dumps([nb.metadata.kernelspec, nb.metadata.language_info]), *cells]


@pytest.mark.slow
def test_stage_notebooks_executed_warm_match_cold_output_for_output(tmp_path, monkeypatch):
    task = load_task(write_task(tmp_path / "mini"))
    runs = {}
    for mode in ("cold", "warm"):
        monkeypatch.setenv("WORKBENCH_WARM_KERNELS", "0" if mode == "cold" else "1")
        rec = run_trial(task, config("oracle"), tmp_path / mode, engine="papermill")
        assert rec.status == "complete", rec.error
        runs[mode] = RunPaths(tmp_path / mode).trial(rec.id)
    for name in STAGE_NOTEBOOKS.values():
        cold = _content(runs["cold"].notebooks / name, tmp_path / "cold")
        warm = _content(runs["warm"].notebooks / name, tmp_path / "warm")
        assert warm == cold, name
    cold_scores, warm_scores = (json.loads(runs[m].scores.read_text()) for m in ("cold", "warm"))
    measured = ("scored_at", "timing")  # when, and how long it took
    assert {k: v for k, v in warm_scores.items() if k not in measured} == \
        {k: v for k, v in cold_scores.items() if k not in measured}


WORKER = """
import json, sys
from pathlib import Path
from workbench.jupyter import pool as kernel_pool
from workbench.jupyter.notebooks import execute_notebook
execute_notebook(Path(sys.argv[1]), Path(sys.argv[2]), {}, warm=True)
pool = kernel_pool.pool()
spare = pool.ready[0][1].result(60)
from workbench.jupyter import warm as warm_kernels
print(json.dumps({"template": warm_kernels._template.proc.pid, "spare": spare.provisioner.pid}), flush=True)
sys.stdin.read()
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_the_template_and_its_kernels_die_with_the_process_that_started_them(tmp_path):
    probe = _notebook(tmp_path / "probe.ipynb", "print(1)")
    proc = subprocess.Popen([sys.executable, "-c", WORKER, str(probe), str(tmp_path / "out.ipynb")], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "WORKBENCH_WARM_KERNELS": "1"})
    pids = json.loads(proc.stdout.readline())
    assert all(_alive(p) for p in pids.values())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k for k, p in pids.items() if _alive(p)]


EXITING = """
import json, sys
from pathlib import Path
from workbench.jupyter import pool as kernel_pool, warm as warm_kernels
from workbench.jupyter.notebooks import execute_notebook
execute_notebook(Path(sys.argv[1]), Path(sys.argv[2]) / "out0.ipynb", {}, warm=True)
spare = kernel_pool.pool().ready[0][1].result(60)  # the next notebook's kernel
print(json.dumps({"template": warm_kernels._template.proc.pid, "used": spare.provisioner.pid}), flush=True)
execute_notebook(Path(sys.argv[3]), Path(sys.argv[2]) / "out1.ipynb", {}, warm=True)
# and exit at once: that kernel takes 2 s to shut down, its replacement is still starting
"""


@pytest.mark.slow
def test_a_process_that_ran_warm_notebooks_exits_cleanly_and_takes_its_kernels_along(tmp_path):
    probe = _notebook(tmp_path / "probe.ipynb", "print(1)")
    slow_exit = _notebook(tmp_path / "slow.ipynb", "import atexit, time\natexit.register(time.sleep, 2)")
    proc = subprocess.run([sys.executable, "-c", EXITING, str(probe), str(tmp_path), str(slow_exit)], cwd=REPO,
                          capture_output=True,
                          text=True, timeout=120, env={**os.environ, "WORKBENCH_WARM_KERNELS": "1"})
    assert proc.returncode == 0 and not re.search(r"Traceback|ERROR|destroyed", proc.stderr), proc.stderr
    pids = json.loads(proc.stdout)
    time.sleep(0.5)
    assert not [k for k, p in pids.items() if _alive(p)]
