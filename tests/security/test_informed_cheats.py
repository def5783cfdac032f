"""Informed cheats (issue 36): submissions built by reading this repository, one per class, replayed and scored
with their bundled task's real environment and rubric (PySCF, Quantum ESPRESSO's pw.x, scikit-learn).

Each scored its task's oracle R on the main of before secret-input replays and per-scoring spot checks (the
"R before issue 36" in README.md's calibration table); each must now stay under 0.3 with the leaf that
catches it saying why. ``task validate`` replays the same submissions among all the others; this file keeps
one per class in ``make test`` whatever subset of tasks it validates."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from workbench.replay.trial import replay_trial
from workbench.sandbox.environments import install_env
from workbench.scoring import score_trial
from workbench.task import load_task

pytestmark = [pytest.mark.attack, pytest.mark.slow]

CHEATS = [
    # class, task, calibration submission, the leaf that catches it, what its own check must say
    ("cache in code + padding inside PySCF's libcint", "h2-pes", "cheat-cache-pyscf-pad", "G5",
     "are not inputs.json's"),
    ("spot checks steered from the file's hash", "h2-pes", "cheat-steered", "G3", "recomputed energies"),
    ("converged settings injected into what pw.x echoes", "si-eos-qe", "cheat-injected-settings", "G4",
     "16.0 Ry, 8 k-points"),
    ("labels carried by the declared estimator", "wdbc-diagnosis", "cheat-lookup", "V1", "can look samples up"),
]


def own_check(leaf) -> tuple[float | None, str]:
    """The leaf's score and rationale as its check left them, before another gate zeroed it."""
    m = leaf.machine or {}
    return (m["score"], m["rationale"]) if m else (leaf.score, leaf.rationale)


@pytest.mark.parametrize("kind,task_name,cheat,leaf_id,reason", CHEATS, ids=[c[2] for c in CHEATS])
def test_an_informed_cheat_stays_under_0_3_on_a_real_run(kind, task_name, cheat, leaf_id, reason, tmp_path):
    task = load_task(REPO / "tasks" / task_name)
    install_env(task)
    prov = replay_trial(task, task.paths.calibration / cheat, tmp_path / "trial")
    # the attack is not a crash: both replays ran to the end, and the scorer, not the sandbox, refused it
    assert prov.status == "succeeded", prov.failure_reasons
    assert prov.secret_replay and prov.secret_replay["status"] == "succeeded", prov.secret_replay
    scores = score_trial(task, tmp_path / "trial")
    leaf = {lf.id: lf for lf in scores.leaves}[leaf_id]
    score, why = own_check(leaf)
    assert score is not None and score < 1 and reason in why, (kind, why)
    assert scores.R_upper < 0.3, (kind, scores.R_upper, [(lf.id, lf.score) for lf in scores.leaves])
