"""``scoring = "discovery"``: a hidden evaluator's metric, validity and message against a published record.

A tiny real discovery task (maximise x under x <= 10, the record 10, the initial code 1) is replayed and
scored through the normal pipeline: the score is the progress from the initial code to the record, an
invalid construction scores 0 whatever it claims, and an evaluator that breaks is withheld, never a 0."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write_files, write_task
from workbench.errors import ValidationProblem
from workbench.task.discovery_spec import DiscoverySpec

pytestmark = pytest.mark.slow

EVALUATOR = '''import json, math, os

def evaluate(submission_dir):
    path = os.path.join(submission_dir, "results", "construction.json")
    try:
        x = json.load(open(path))["x"]
    except Exception as exc:
        return {"metric": None, "valid": False, "message": f"unreadable: {exc}"[:200]}
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return {"metric": None, "valid": False, "message": f"x = {x!r} is not a finite number"}
    if not -1e-9 <= x <= 10 + 1e-9:
        return {"metric": None, "valid": False, "message": f"x = {x} is outside [0, 10] by more than 1e-9"}
    return {"metric": float(x), "valid": True, "message": f"x = {x}"}
'''
SPEC = {"metric": "x", "direction": "maximize", "published": {"value": 10.0, "source": "the bound itself"},
        "initial": 1.0, "reference_within": 0.01, "tolerance": "1e-9 on the bounds", "timeout_sec": 30}


def writes(x) -> dict[str, str]:
    """A package whose Python writes the construction ``x`` (NaN and all)."""
    return {"reproduce.sh": "mkdir -p results\npython3 - <<'EOF'\nimport json\n"
                            f"open('results/construction.json', 'w').write({json.dumps(json.dumps(x))})\nEOF\n"}


@pytest.fixture
def task(tmp_path):
    from workbench.task import load_task

    root = write_task(tmp_path / "disc")
    toml = (root / "task.toml").read_text().replace('paper = "none"\n', 'paper = "none"\nscoring = "discovery"\n')
    (root / "task.toml").write_text(toml)
    (root / "tests" / "rubric.json").unlink()
    (root / "tests" / "evaluator.py").write_text(EVALUATOR)
    (root / "tests" / "discovery.json").write_text(json.dumps(SPEC))
    write_files(root / "solution", writes({"x": 10.0}))
    write_files(root / "environment" / "starter_submission", writes({"x": 1.0}))
    for name, x in (("cheat-over", {"x": 10.5}), ("cheat-nan", {"x": float("nan")}),
                    ("cheat-claims", {"x": 0.5, "metric": 1000, "valid": True})):
        write_files(root / "calibration" / name, writes(x))
    return load_task(root)


def score(task, tmp_path, x):
    from workbench.replay.trial import replay_trial
    from workbench.scoring import score_trial

    sub = write_files(tmp_path / f"sub-{abs(hash(str(x)))}", writes(x))
    replay_trial(task, sub, tmp_path / f"t-{abs(hash(str(x)))}")
    return score_trial(task, tmp_path / f"t-{abs(hash(str(x)))}")


def test_the_score_is_the_progress_from_the_initial_code_to_the_record(task, tmp_path):
    s = score(task, tmp_path, {"x": 5.5})
    assert s.discovery["valid"] is True and s.discovery["metric"] == 5.5 and s.discovery["published"] == 10.0
    assert s.R == pytest.approx(0.5) and not s.discovery["beats_published"]
    assert [lf.id for lf in s.leaves] == ["valid", "progress"]


def test_an_invalid_construction_scores_0_whatever_it_claims(task, tmp_path):
    s = score(task, tmp_path, {"x": 11, "metric": 1000.0, "valid": True})
    assert s.discovery["valid"] is False and s.discovery["metric"] is None and s.R == 0
    assert "outside [0, 10]" in s.discovery["message"]
    progress = next(lf for lf in s.leaves if lf.id == "progress")
    assert progress.status == "gated" and progress.score == 0


def test_an_evaluator_that_breaks_is_withheld_not_a_zero(task, tmp_path):
    task.paths.evaluator.write_text("def evaluate(submission_dir):\n    return undefined_name\n")
    s = score(task, tmp_path, {"x": 5.5})
    assert s.discovery["withheld"] is True and "NameError" in s.discovery["message"]
    by = {lf.id: lf for lf in s.leaves}
    assert by["valid"].status == "withheld" and by["progress"].machine["status"] == "withheld"
    assert s.needs_rescoring and s.R_upper == 1  # not a 0: rescored once the evaluator is fixed


def test_the_spec_refuses_an_initial_value_at_or_past_the_record(tmp_path):
    with pytest.raises(ValueError, match="must be worse than the published"):
        DiscoverySpec.model_validate({**SPEC, "initial": 10.0})
    spec = DiscoverySpec.model_validate({**SPEC, "direction": "minimize", "initial": 20.0})
    assert spec.progress(15.0) == 0.5 and spec.progress(9.0) == 1.0 and spec.progress(25.0) == 0.0
    assert spec.near_published(10.05) and not spec.near_published(10.2)
    (tmp_path / "d.json").write_text(json.dumps({**SPEC, "metrc": "x"}))
    from workbench.task.discovery_spec import load_discovery
    with pytest.raises(ValidationProblem, match="metrc"):
        load_discovery(tmp_path / "d.json")


def test_validation_knows_a_discovery_task(task):
    from workbench.authoring.check import check_task
    from workbench.authoring.validate import validate_task

    assert check_task(task.root).ok, check_task(task.root).errors
    rec = validate_task(task, install=False, write=False)
    assert rec.passed, [f"{c.name}: {c.detail}" for c in rec.checks if not c.passed]
    assert rec.runs["oracle-1"]["metric"] == 10.0 and rec.runs["initial"]["metric"] == 1.0
    assert rec.runs["calibration/cheat-claims"]["metric"] == 0.5  # its own claim of 1000 is never read
    write_files(task.root / "calibration" / "cheat-gains", writes({"x": 2.0}))
    rec = validate_task(task, install=False, write=False)
    failed = {c.name: c.detail for c in rec.checks if not c.passed}
    assert "gaining: calibration/cheat-gains" in failed["cheats invalid or worse than the initial code (at least 3)"]
