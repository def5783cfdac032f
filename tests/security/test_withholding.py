"""Attacks that try to turn a submission's own failure into "withheld" (and so out of every mean):
malformed outputs that crash a check, names that break the manifest, trees that break a recursive walk.
A fault caused by what the submission wrote is the submission's failure: the leaf scores 0 with the reason.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import config, write_files, write_task
from tests.security.conftest import hostile_task
from workbench.evidence import verify
from workbench.reader.client import for_reader
from workbench.task import load_task
from workbench.trial.pipeline import run_trial

pytestmark = [pytest.mark.attack, pytest.mark.slow]
LOG = "echo ok > results/log.txt\n"


def _v1(out):
    return next(lf for lf in out.scores.leaves if lf.id == "v1")


def test_a_400_digit_number_where_a_float_is_expected(attack):
    out = attack("mkdir -p results\necho '{\"value\": 1" + "0" * 400 + "}' > results/value.json\n" + LOG)
    v1 = _v1(out)
    assert (v1.status, v1.score) == ("scored", 0.0) and "not a number" in v1.rationale
    assert not out.scores.needs_rescoring
    # what a reader is handed of it is bounded, whatever the submission made of the provenance
    assert len(json.dumps(for_reader(out.prov.model_dump(), ["submission/results/value.json"]))) < 50_000


def test_json_nested_a_hundred_thousand_deep(attack):
    out = attack("mkdir -p results\npython3 -c \"print('{\\\"value\\\": ' + '[' * 100000 + ']' * 100000 + '}')\" "
                 "> results/value.json\n" + LOG)
    v1 = _v1(out)
    assert (v1.status, v1.score) == ("scored", 0.0) and "RecursionError" in v1.rationale
    assert not out.scores.needs_rescoring and out.scores.coverage < 1  # only the expert leaf waits


CSV_RUBRIC = {"id": "r", "sub_tasks": [
    {"id": "mono", "weight": 1, "task_category": "Validation",
     "check": {"kind": "monotone", "path": "results/curve.csv", "column": "E", "direction": "decreasing"}},
    {"id": "fit", "weight": 1, "task_category": "Validation", "check": {"kind": "task", "name": "minimum"}}]}
CSV_CHECKS = """import io
import pandas as pd
from workbench.scoring import task_check

@task_check
def minimum(ev):
    df = pd.read_csv(io.StringIO(ev.read_text("results/curve.csv")))
    return float(df["E"].astype(float).min()) < 0
"""


def test_text_in_a_numeric_column(attack, tmp_path):
    task = load_task(write_task(tmp_path / "csv-task", rubric=CSV_RUBRIC, checks_py=CSV_CHECKS))
    out = attack("mkdir -p results\nprintf 'r,E\\n1,-1.0\\n2,oops\\n3,-0.5\\n' > results/curve.csv\n", task_=task)
    by = {lf.id: lf for lf in out.scores.leaves}
    assert (by["mono"].status, by["mono"].score) == ("scored", 0.0) and "non-numeric" in by["mono"].rationale
    assert (by["fit"].status, by["fit"].score) == ("scored", 0.0) and "oops" in by["fit"].rationale
    assert not out.scores.needs_rescoring and out.scores.final and out.scores.R == 0


def test_a_newline_in_an_output_file_name(attack):
    out = attack("mkdir -p results\necho '{\"value\": 42}' > results/value.json\n" + LOG
                 + "echo evil > \"$(printf 'results/evil\\nname.json')\"\n"
                 + "echo evil > 'results/back\\slash.json'\n")
    assert out.prov.status == "succeeded" and verify(out.trial / "evidence") == []
    assert (out.trial / "evidence" / "submission" / "results" / "evil\nname.json").is_file()
    check = subprocess.run(["sha256sum", "--strict", "-c", "MANIFEST.sha256"], cwd=out.trial / "evidence",
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr  # the manifest is what coreutils writes
    assert _v1(out).score == 1.0 and not out.scores.needs_rescoring


@pytest.mark.parametrize("depth", [600, 3000])
def test_directories_nested_deeper_than_a_recursive_walk_or_path_max_allow(tmp_path, depth):
    task = hostile_task(tmp_path / "task", max_files=20_000)
    script = ("mkdir -p results\necho '{\"value\": 42}' > results/value.json\n" + LOG
              + f"python3 -c \"import os\nos.chdir('results')\nfor _ in range({depth}): os.mkdir('d'); os.chdir('d')\n"
              "open('f.txt', 'w').write('deep')\"\n")
    sub = write_files(tmp_path / "sub", {"reproduce.sh": script})
    rec = run_trial(task, config("replay", options={"submission": str(sub)}), tmp_path / "run", engine="inline")
    assert rec.status == "complete", rec.error  # never an infra_error
    assert rec.outcome["replay"] == "succeeded" and rec.outcome["R"] > 0 and not rec.outcome["needs_rescoring"]
    prov = (tmp_path / "run" / "trials" / rec.id / "replay" / "provenance.json").read_text()
    assert "nested deeper than 128 directories" in prov  # not frozen, and said so


def test_a_provenance_bloated_by_long_named_sources_does_not_keep_the_reader_from_starting(attack, tmp_path):
    """Twelve thousand sources with 240-character names make the provenance megabytes (their hashes are in
    it twice); a reader of the task's memory must still start, so the failing replay scores 0, not
    withheld."""
    task = hostile_task(tmp_path / "bloat", max_files=20000)
    toml = (tmp_path / "bloat" / "task.toml").read_text()
    (tmp_path / "bloat" / "task.toml").write_text(toml.replace("memory_mb = 512", "memory_mb = 200")
                                                  .replace("storage_mb = 64", "storage_mb = 512"))
    task = load_task(tmp_path / "bloat")
    files = {f"src/d{i // 1000}/{'s' * 240}{i}.py": "" for i in range(12000)}
    out = attack("exit 3\n", files=files, task_=task)
    assert len(out.prov.source_hashes_before) >= 12000
    assert (out.trial / "replay" / "provenance.json").stat().st_size > 5_000_000
    e1 = next(lf for lf in out.scores.leaves if lf.id == "e1")
    assert (e1.status, e1.score) == ("scored", 0.0) and "exited with code 3" in e1.rationale, e1
    assert not out.scores.needs_rescoring
    # what a reader is handed of it is bounded, whatever the submission made of the provenance
    assert len(json.dumps(for_reader(out.prov.model_dump(), ["submission/results/value.json"]))) < 50_000
