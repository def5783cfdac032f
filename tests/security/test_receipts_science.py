"""The receipts' attacks with the real domain programs: PySCF (the demo task's environment) and Quantum
ESPRESSO's pw.x (si-eos-qe's). CPU padding after ``import pyscf`` is not PySCF's CPU; a shell that writes into
pw.x's output before running it, or a library of the submission's loaded into pw.x, is not pw.x's work.

Under bwrap, whose task environments are installed on the host; the docker backend records the same way
(tests/security/test_receipts.py runs every class of attack under both, with the image's own programs), and
building the PySCF and Quantum ESPRESSO images is `make test-docker-tasks`' job."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import DEMO, REPO, required_tool_missing, write_files, write_task
from workbench.receipts import Receipts
from workbench.replay.trial import replay_trial
from workbench.scoring import score_trial
from workbench.task import load_task

pytestmark = [pytest.mark.attack, pytest.mark.slow]


def _task_with_env(root, source, rubric: list[dict]):
    from workbench.sandbox.environments import install_env
    from workbench.sandbox.recorder import available

    ok, why = available()
    if not ok:
        required_tool_missing(f"the execution recorder ({why})")
    write_task(root, rubric={"id": "r", "sub_tasks": rubric}, timeout_sec=300)
    for p in (source / "environment").iterdir():
        if p.name not in ("paper", "starter_submission", "Dockerfile"):
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, root / "environment" / p.name)
    task = load_task(root)
    install_env(task)
    return task


def _run(task, tmp_path, name: str, files: dict[str, str]):
    sub = write_files(tmp_path / f"sub-{name}", files)
    prov = replay_trial(task, sub, tmp_path / name)
    r = Receipts.model_validate_json((tmp_path / name / "replay" / "receipts.json").read_text())
    assert r.complete, r.problems
    return prov, r, {lf.id: lf for lf in score_trial(task, tmp_path / name).leaves}


# three geometries, about 2.5 s of integrals here: a CI machine twice as fast still clears the 0.5 s gate
WATER = """import json
from pyscf import gto, scf
energies = {}
for y in (0.747, 0.757, 0.767):
    mol = gto.M(atom=f"O 0 0 0; H 0 {y} 0.587; H 0 -{y} 0.587", basis="cc-pvqz", verbose=0)
    energies[y] = scf.RHF(mol).kernel()
json.dump({"energy": energies[0.757], "scan": energies}, open("results/energy.json", "w"))
"""
# the energy computed once elsewhere, typed in, and the CPU gate met with numpy's BLAS after the import
PADDED = """import json, time
import numpy as np
import pyscf
a = np.random.default_rng(0).random((400, 400))
while time.process_time() < 4:  # CPU time, not wall time: a busy machine gives a wall second less CPU
    a = a @ a
    a /= np.abs(a).max()
json.dump({"energy": -76.0596}, open("results/energy.json", "w"))
"""
PYSCF_CODE = ["libcint", "libcvhf", "libcgto"]


@pytest.fixture(scope="module")
def pyscf_task(tmp_path_factory):
    return _task_with_env(tmp_path_factory.mktemp("pyscf") / "task", DEMO, [
        {"id": "loaded", "weight": 1, "task_category": "Execution",
         "check": {"kind": "loaded", "package": "pyscf", "min_cpu_sec": 2.0}},
        {"id": "integrals", "weight": 1, "task_category": "Execution",
         "check": {"kind": "cpu_in", "library": PYSCF_CODE, "min_cpu_sec": 0.5}},
        {"id": "written", "weight": 1, "task_category": "Execution",
         "check": {"kind": "written_by", "path": "results/energy.json", "package": "pyscf"}}])


BWRAP = pytest.mark.parametrize("backend", ["bwrap"])


@BWRAP
def test_numpy_padding_after_import_pyscf_is_not_pyscf_cpu(pyscf_task, tmp_path, backend):
    script = "mkdir -p results\npython3 src/run.py\n"
    _, r, padded = _run(pyscf_task, tmp_path, "padded", {"reproduce.sh": script, "src/run.py": PADDED})
    assert padded["loaded"].score == 1.0 and padded["written"].score == 1.0  # what this attack beats
    assert padded["integrals"].score == 0.0, padded["integrals"].rationale
    assert r.cpu_in(library=PYSCF_CODE) < 0.1 and r.cpu_in(package="numpy") > 1.0  # the padding is numpy's
    _, r, real = _run(pyscf_task, tmp_path, "real", {"reproduce.sh": script, "src/run.py": WATER})
    assert real["integrals"].score == 1.0 and real["written"].score == 1.0, real["integrals"].rationale
    assert r.cpu_in(library=PYSCF_CODE) >= 0.5


SI = """&control
  calculation = 'scf', prefix = 'si', pseudo_dir = '/usr/share/espresso/pseudo', outdir = '/tmp/qe'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 20
/
&electrons
/
ATOMIC_SPECIES
  Si 28.0855 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
  Si 0.00 0.00 0.00
  Si 0.25 0.25 0.25
K_POINTS automatic
  4 4 4 0 0 0
"""
# a library of the submission's, built in the replay and preloaded into pw.x: it writes the output itself
PRELOAD = r"""#include <stdio.h>
__attribute__((constructor)) static void typed(void) {
    FILE *f = fopen("results/preload.out", "w");
    fprintf(f, "!    total energy              =     -15.84 Ry\n     JOB DONE.\n");
    fclose(f);
}
"""


@pytest.fixture(scope="module")
def qe_task(tmp_path_factory):
    return _task_with_env(tmp_path_factory.mktemp("qe") / "task", REPO / "tasks" / "si-eos-qe", [
        {"id": "ran", "weight": 1, "task_category": "Execution",
         "check": {"kind": "ran", "program": "pw.x", "min_cpu_sec": 0.05}},
        {"id": "honest", "weight": 1, "task_category": "Execution",
         "check": {"kind": "written_by", "path": "results/si.out", "program": "pw.x"}},
        {"id": "before", "weight": 1, "task_category": "Execution",
         "check": {"kind": "written_by", "path": "results/before.out", "program": "pw.x"}},
        {"id": "preload", "weight": 1, "task_category": "Execution",
         "check": {"kind": "written_by", "path": "results/preload.out", "program": "pw.x"}}])


@BWRAP
def test_pw_x_earns_its_receipts_and_a_shell_or_a_preloaded_library_does_not(qe_task, tmp_path, backend):
    script = """mkdir -p results
OMP_NUM_THREADS=1 pw.x -input src/si.in > results/si.out
sh -c 'echo "!    total energy              =     -15.84 Ry"; exec pw.x -input src/si.in' > results/before.out
gcc -shared -fPIC -o /tmp/typed.so src/typed.c
LD_PRELOAD=/tmp/typed.so pw.x -input src/si.in > /dev/null
"""
    prov, r, by = _run(qe_task, tmp_path, "qe", {"reproduce.sh": script, "src/si.in": SI, "src/typed.c": PRELOAD})
    assert prov.status == "succeeded", prov.failure_reasons
    assert by["ran"].score == 1.0 and by["honest"].score == 1.0, (by["ran"].rationale, by["honest"].rationale)
    assert by["before"].score == 0.0 and "written by dash" in by["before"].rationale, by["before"].rationale
    assert by["preload"].score == 0.0 and "not pw.x" in by["preload"].rationale, by["preload"].rationale
    runs = r.runs_of("pw.x")
    assert len(runs) == 2  # the honest one and the one after the shell; the preloaded one ran foreign code
    preloaded = [p for p in r.processes
                 if any(im.name == "pw.x" and im.foreign_code and not im.inherited for im in p.images)]
    assert len(preloaded) == 1 and preloaded[0] not in runs
    assert all(p.origin == "system" and p.sha256 for p in runs)
