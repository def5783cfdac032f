"""Receipt check kinds and spot recomputation with a real program: a PySCF run against a cat of its output.

The task runs in the demo task's real environment (PySCF); each check kind is asked the same question of
a submission that computed its numbers and of one that typed them in, in exactly the same format.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import DEMO, required_tool_missing, write_files, write_task
from workbench.replay.trial import replay_trial
from workbench.scoring import score_trial
from workbench.task import load_task

pytestmark = pytest.mark.slow

ENERGY = """import json, sys
from pyscf import gto, scf
r = float(sys.argv[1])
mol = gto.M(atom=f"H 0 0 0; H 0 0 {r}", unit="Bohr", basis="sto-3g", verbose=0)
e = scf.RHF(mol).kernel()
json.dump({"r": r, "basis": "sto-3g", "energy": e}, open(sys.argv[2], "w"))
"""
REAL = ("mkdir -p results\npython3 src/energy.py 1.4 results/e_1.4.json\n"
        "python3 src/energy.py 1.6 results/e_1.6.json\n")
TYPED_IN = ("mkdir -p results\n"
            "echo '{\"r\": 1.4, \"basis\": \"sto-3g\", \"energy\": -1.116714325}' > results/e_1.4.json\n"
            "echo '{\"r\": 1.6, \"basis\": \"sto-3g\", \"energy\": -1.1127}' > results/e_1.6.json\n")
# one real point relabelled as a second: what a cheap run passed off as a study looks like
RELABELLED = REAL.replace("python3 src/energy.py 1.6 results/e_1.6.json",
                          "sed 's/1.4/1.6/' results/e_1.4.json > results/e_1.6.json")
RECOMPUTE = """import json
from pyscf import gto, scf


def energy_at(evidence, path, tolerance=1e-6):
    point = json.loads((evidence / path).read_text())
    mol = gto.M(atom=f"H 0 0 0; H 0 0 {point['r']}", unit="Bohr", basis=point["basis"], verbose=0)
    e = scf.RHF(mol).kernel()
    ok = abs(e - point["energy"]) <= tolerance
    return {"score": float(ok), "rationale": f"recomputed {e:.9f} vs submitted {point['energy']:.9f} Eh"}
"""
RUBRIC = {"id": "r", "sub_tasks": [
    {"id": "ran", "weight": 1, "task_category": "Execution",
     "check": {"kind": "ran", "program": "python3", "min_cpu_sec": 0.2, "min_runs": 2}},
    {"id": "loaded", "weight": 1, "task_category": "Execution",
     "check": {"kind": "loaded", "package": "pyscf", "min_cpu_sec": 0.2}},
    {"id": "written", "weight": 1, "task_category": "Execution",
     "check": {"kind": "written_by", "path": "results/e_*.json", "package": "pyscf", "min_files": 2}},
    {"id": "cpu", "weight": 1, "task_category": "Execution", "check": {"kind": "cpu_seconds", "min": 0.5}},
    {"id": "distinct", "weight": 1, "task_category": "Validation",
     "check": {"kind": "distinct", "paths": ["results/e_*.json"]}},
    {"id": "recomputed", "weight": 1, "task_category": "Validation",
     "check": {"kind": "recompute", "function": "energy_at", "params": {"path": "submission/results/e_1.6.json"},
               "timeout_sec": 120}},
]}


@pytest.fixture(scope="module")
def pyscf_task(tmp_path_factory, demo_task):
    """A task with the demo's PySCF environment (the same environment files, so the same installed env)."""
    from workbench.sandbox.recorder import available

    ok, why = available()
    if not ok:
        required_tool_missing(f"the execution recorder ({why})")
    root = write_task(tmp_path_factory.mktemp("receipts") / "task", rubric=RUBRIC)
    for p in (DEMO / "environment").iterdir():
        if p.name not in ("paper", "starter_submission", "Dockerfile"):
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, root / "environment" / p.name)
    (root / "tests" / "recompute.py").write_text(RECOMPUTE)
    return load_task(root)


def _scores(task, tmp_path, script):
    sub = write_files(tmp_path / "sub", {"reproduce.sh": script, "src/energy.py": ENERGY})
    replay_trial(task, sub, tmp_path / "t")
    receipts = json.loads((tmp_path / "t" / "replay" / "receipts.json").read_text())
    assert receipts["complete"], receipts["problems"]
    return {lf.id: lf for lf in score_trial(task, tmp_path / "t").leaves}


def test_a_real_pyscf_run_earns_every_receipt_check(pyscf_task, tmp_path):
    by = _scores(pyscf_task, tmp_path, REAL)
    assert {k: v.score for k, v in by.items()} == dict.fromkeys(by, 1.0), {k: v.rationale for k, v in by.items()}
    assert "recomputed -1.1" in by["recomputed"].rationale


def test_typed_in_numbers_in_the_same_format_earn_none(pyscf_task, tmp_path):
    by = _scores(pyscf_task, tmp_path, TYPED_IN)
    for leaf in ("ran", "loaded", "written", "cpu"):
        assert by[leaf].score == 0.0, (leaf, by[leaf].rationale)
    assert "written by bash, not pyscf" in by["written"].rationale
    assert by["distinct"].score == 1.0  # different numbers, so only the receipts tell
    assert by["recomputed"].score == 0.0 and "vs submitted -1.112700000" in by["recomputed"].rationale


def test_a_run_relabelled_as_another_point_is_caught_by_writer_and_distinctness(pyscf_task, tmp_path):
    by = _scores(pyscf_task, tmp_path, RELABELLED)
    assert by["loaded"].score == 1.0 and by["ran"].score == 0.0  # one real run, not two
    assert by["written"].score == 0.0 and "e_1.6.json: written by sed" in by["written"].rationale
    assert by["recomputed"].score == 0.0  # r = 1.4's energy claimed for r = 1.6
    copied = _scores(pyscf_task, tmp_path / "copy", REAL.replace("python3 src/energy.py 1.6 results/e_1.6.json",
                                                                 "cp results/e_1.4.json results/e_1.6.json"))
    assert copied["distinct"].score == 0.0 and "identical contents" in copied["distinct"].rationale
