"""The construction pipeline's checks on small synthetic tasks, and the bundled suite's shape."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, run_cli, write_task
from workbench.authoring.check import check_task
from workbench.authoring.validate import _same_scores, compare_evidence, freeze_task, frozen_changes, validate_task
from workbench.errors import ValidationProblem, WorkbenchError
from workbench.evidence import freeze
from workbench.task import find_tasks, load_task
from workbench.task.construction import (
    Determinism,
    Tolerance,
    ValidationRecord,
    read_determinism,
    read_freeze,
    read_review_log,
    read_validation,
)

PARTIAL = 'mkdir -p results\necho \'{"value": 42}\' > results/value.json\n'  # no log.txt
INVALID = 'mkdir -p results\necho \'{"value": 7}\' > results/value.json\nexit 1\n'
RUBRIC = {"id": "r", "sub_tasks": [
    {"id": "m1", "weight": 1, "task_category": "Modeling",
     "check": {"kind": "file_exists", "path": "results/value.json"}},
    {"id": "e1", "weight": 1, "task_category": "Execution", "check": {"kind": "replay_succeeded"}},
    {"id": "v1", "weight": 1, "task_category": "Validation",
     "check": {"kind": "json_value", "path": "results/value.json", "key": "value", "target": 42}},
    {"id": "v2", "weight": 1, "task_category": "Validation",
     "check": {"kind": "file_exists", "path": "results/log.txt"}},
]}


CHEATS = {"cheat-nothing": "exit 0\n", "cheat-crash": "exit 1\n",
          "cheat-wrong": "mkdir -p results\necho '{\"value\": 7}' > results/value.json\nexit 1\n"}


def _calibrated(tmp_path, partial=PARTIAL, invalid=INVALID, cheats=None):
    root = write_task(tmp_path / "task", rubric=RUBRIC)
    for name, script in (("partial", partial), ("invalid", invalid), *(CHEATS if cheats is None else cheats).items()):
        (root / "calibration" / name).mkdir(parents=True)
        (root / "calibration" / name / "reproduce.sh").write_text(script)
    return load_task(root)


@pytest.mark.slow
def test_every_cheat_must_stay_below_0_3(tmp_path):
    typed_in = "mkdir -p results\necho '{\"value\": 42}' > results/value.json\necho ok > results/log.txt\n"
    rec = validate_task(_calibrated(tmp_path / "a", cheats={"cheat-typed-in": typed_in}), install=False, write=False)
    check = next(c for c in rec.checks if c.name.startswith("cheats < 0.3"))
    assert not check.passed and "R_upper = 1.0000" in check.detail
    assert "1 of the 3 required" in check.detail  # and one cheat is too few


@pytest.mark.slow
def test_a_well_calibrated_task_validates_and_records_it(tmp_path):
    task = _calibrated(tmp_path)
    rec = validate_task(task, install=False)
    assert rec.passed, [c for c in rec.checks if not c.passed]
    assert {c.name for c in rec.checks} >= {"oracle R > 0.9", "nop R = 0", "invalid < 0.3 (pending leaves passed)",
                                               "reference replays agree"}
    assert (rec.runs["oracle-1"]["R"], rec.runs["calibration/partial"]["R"], rec.runs["calibration/invalid"]["R"],
            rec.runs["nop"]["R"]) == pytest.approx((1.0, 0.75, 0.25, 0.0))
    on_disk = json.loads((task.paths.tests / "validation.json").read_text())
    assert on_disk["passed"] and on_disk["content_hash"] == task.content_hash()
    assert set(on_disk["runs"]) == {"oracle-1", "oracle-2", "nop", "calibration/partial", "calibration/invalid",
                                    *(f"calibration/{n}" for n in CHEATS)}


@pytest.mark.slow
def test_validate_jobs_runs_tasks_side_by_side_and_says_each(tmp_path):
    """The command line with --jobs 2: each task's verdict and record, a failing one failing the exit code."""
    good = _calibrated(tmp_path / "good")
    bad = _calibrated(tmp_path / "bad", partial=INVALID)  # its partial scores no better than the invalid
    r = run_cli("task", "validate", "--no-install", "--jobs", "2", str(good.root), str(bad.root))
    assert r.returncode == 1, r.stderr
    assert f"ok  {good.id}  (reference replay" in r.stdout and f"FAILED  {bad.id}  (reference replay" in r.stdout
    assert json.loads((good.paths.tests / "validation.json").read_text())["passed"]
    assert not json.loads((bad.paths.tests / "validation.json").read_text())["passed"]


@pytest.mark.slow
def test_validation_fails_when_calibration_is_out_of_order(tmp_path):
    # an "invalid" package that is in fact fully right must fail the construction checks
    task = _calibrated(tmp_path, invalid='mkdir -p results\necho \'{"value": 42}\' > results/value.json\n'
                                        'echo x > results/log.txt\n')
    rec = validate_task(task, install=False, write=False)
    failed = {c.name for c in rec.checks if not c.passed}
    assert failed == {"invalid < 0.3 (pending leaves passed)", "invalid < partial < oracle"}
    detail = next(c.detail for c in rec.checks if c.name.startswith("invalid < 0.3"))
    assert "\n      calibration/invalid: earned by " in detail, detail  # which leaves gave it its score

    assert not (task.paths.tests / "validation.json").exists()  # write=False leaves no record

@pytest.mark.slow
def test_an_invalid_submission_must_stay_below_0_3_with_its_pending_leaves_passed(tmp_path):
    # only the expert leaf's log: R = 0 (its leaf is pending), but if the expert passed it R would be 0.25
    rubric = {"id": "r", "sub_tasks": [
        {"id": "e1", "weight": 3, "task_category": "Execution",
         "check": {"kind": "file_exists", "path": "results/value.json"}},
        {"id": "x1", "weight": 1, "task_category": "Validation", "method": "expert",
         "evidence_inputs": [{"path": "submission/results/log.txt"}]},
        {"id": "x2", "weight": 1, "task_category": "Validation", "method": "expert",
         "evidence_inputs": [{"path": "submission/results/log.txt"}]}]}
    root = write_task(tmp_path / "task", rubric=rubric)
    for name, script in (("partial", "mkdir -p results\necho 1 > results/value.json\n"),
                         ("invalid", "mkdir -p results\necho looks-right > results/log.txt\n")):
        (root / "calibration" / name).mkdir(parents=True)
        (root / "calibration" / name / "reproduce.sh").write_text(script)
    rec = validate_task(load_task(root), install=False, write=False)
    check = next(c for c in rec.checks if c.name.startswith("invalid < 0.3"))
    assert rec.runs["calibration/invalid"]["R"] == 0.0  # the lower bound alone would pass it
    assert not check.passed and "R_upper = 0.4000" in check.detail
    # the failed line says which leaves decided it, and the record keeps every run's leaf table
    assert ("calibration/invalid: pending_review leaves x1, x2 weigh 0.40: R = 0.00 with them at 0, R_upper = 0.40"
            in check.detail), check.detail
    assert [row[:3] for row in rec.runs["oracle-1"]["leaves"]] == [
        ["e1", "scored", 1.0], ["x1", "pending_review", None], ["x2", "pending_review", None]]


def test_calibration_is_required(tmp_path):
    task = load_task(write_task(tmp_path / "task"))
    with pytest.raises(WorkbenchError, match="needs at least one partial"):
        validate_task(task, install=False)


def _frozen_evidence(tmp_path, name, files):
    stage = tmp_path / f"stage-{name}"
    for rel, text in files.items():
        (stage / rel).parent.mkdir(parents=True, exist_ok=True)
        (stage / rel).write_text(text)
    freeze(stage, tmp_path / name)
    return tmp_path / name


def test_evidence_comparison_uses_declared_tolerances(tmp_path):
    a = _frozen_evidence(tmp_path, "a", {"submission/results/x.csv": "f,v\n1,0.1000001\n", "replay/stdout.log": "t=1s",
                                         "submission/results/y.json": '{"v": [1.0, 2.0]}'})
    b = _frozen_evidence(tmp_path, "b", {"submission/results/x.csv": "f,v\n1,0.1000002\n", "replay/stdout.log": "t=2s",
                                         "submission/results/y.json": '{"v": [1.0, 2.5]}'})
    strict = compare_evidence(a, b, Determinism())
    assert len(strict["differing"]) == 3
    loose = compare_evidence(a, b, Determinism(ignore=["replay/*"], tolerances={
        "submission/results/*.csv": Tolerance(abs=1e-6), "submission/results/*.json": Tolerance(abs=1e-6)}))
    assert loose["ignored"] == ["replay/stdout.log"]
    assert [d.split(":")[0] for d in loose["differing"]] == ["submission/results/y.json"]
    assert "1 value(s) outside tolerance" in loose["differing"][0]


@pytest.mark.slow
def test_freeze_needs_a_current_passing_validation_and_then_guards_the_task(tmp_path):
    task = _calibrated(tmp_path)
    with pytest.raises(WorkbenchError, match="not validated yet"):
        freeze_task(task)
    validate_task(task, install=False)
    (task.paths.tests / "review.toml").write_text(
        '[[review]]\nreviewer = "A. Expert"\ndate = 2026-11-30\nscope = "science"\n'
        '[[review]]\nreviewer = "B. Expert"\ndate = 2026-12-01\nscope = "rubric"\n')
    rec = freeze_task(task)  # review.toml is a construction record: it does not invalidate validation
    assert rec.reviewers == ["A. Expert", "B. Expert"] and rec.validation_passed
    # the records as written are their models, field for field
    assert read_freeze(task.paths) == rec and json.loads(task.paths.freeze.read_text()) == rec.model_dump()
    validated = read_validation(task.paths)
    assert validated.passed and json.loads(task.paths.validation.read_text()) == validated.model_dump()
    assert check_task(task.root).ok
    assert not [w for w in check_task(task.root).warnings if "review" in w or "validation" in w]
    (task.root / "instruction.md").write_text("Something else entirely.\n")
    assert frozen_changes(task) == ["instruction.md"]
    rep = check_task(task.root)
    assert not rep.ok and "changed since it was frozen: instruction.md" in rep.errors[0]
    with pytest.raises(WorkbenchError, match="changed since it was validated"):
        freeze_task(task)


def test_a_malformed_construction_record_is_one_line_naming_the_file_and_field(tmp_path):
    root = write_task(tmp_path / "task")
    task = load_task(root)
    task.paths.validation.write_text('{"task": "task", "passed": "maybe"}')
    proc = run_cli("task", "check", str(root))
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"error: {task.paths.validation}: passed: Input should be a valid boolean, unable to interpret input" \
        in errors and all(line.startswith(f"error: {task.paths.validation}: ") for line in errors)
    with pytest.raises(ValidationProblem, match="validation.json: content_hash: Field required"):
        freeze_task(task)
    task.paths.validation.unlink()
    task.paths.freeze.write_text("{")
    assert check_task(root).errors == [f"{task.paths.freeze}: not valid JSON: Expecting property name enclosed in "
                                       "double quotes: line 1 column 2 (char 1)"]
    task.paths.freeze.unlink()
    task.paths.determinism.write_text('ignore = "replay/*"\n')
    assert check_task(root).errors == [f"{task.paths.determinism}: ignore: Input should be a valid list"]


def test_the_bundled_tasks_records_are_their_models():
    for root in BUNDLED:
        paths = load_task(root).paths
        assert read_validation(paths).passed and len(read_review_log(paths).review) >= 1
        read_determinism(paths)  # authored: loads, whatever it allows


def test_malformed_review_log_is_a_named_error(tmp_path):
    root = write_task(tmp_path / "task")
    (root / "tests" / "review.toml").write_text('[[review]]\nreviewer = ""\ndate = "yesterday"\n')
    errors = "\n".join(check_task(root).errors)
    assert "review.toml: review.0.reviewer" in errors and "review.0.date" in errors and "review.0.scope" in errors


BUNDLED = find_tasks(REPO / "tasks")


def test_the_bundled_suite_spans_seven_tasks_in_six_fields():
    tasks = [load_task(t) for t in BUNDLED]
    assert len(tasks) >= 7
    assert len({t.config.metadata.field for t in tasks}) >= 6


@pytest.mark.parametrize("root", BUNDLED, ids=lambda p: p.name)
def test_every_bundled_task_is_complete(root):
    rep = check_task(root)
    assert rep.ok, rep.errors
    task = load_task(root)
    leaves = task.rubric.leaves
    if task.scoring == "discovery":  # a construction, a hidden evaluator, the record and the initial code
        for f in ("environment/Dockerfile", "environment/install.sh", "environment/starter_submission/reproduce.sh",
                  "solution/reproduce.sh", "tests/evaluator.py", "tests/discovery.json", "tests/TOLERANCES.md",
                  "tests/review.toml"):
            assert (root / f).is_file(), f
        assert sum(d.name.startswith("cheat-") for d in (root / "calibration").iterdir()) >= 3
        spec = task.discovery_spec
        assert spec.published.source and spec.previous and spec.previous.source and spec.tolerance
        assert "tolerance" in (root / "instruction.md").read_text().lower()  # stated to the agents
        record = json.loads((root / "tests" / "validation.json").read_text())
        assert record["passed"] and record["content_hash"] == task.content_hash(), "re-run `make validate`"
        return
    if task.scoring == "qa":  # one leaf per question, answers verified by running the analysis
        from workbench.task.questions import load_questions

        spec = load_questions(task.paths.questions)
        qs = spec.questions
        assert sum(q.type == "mcq" for q in qs) >= 5 and sum(q.type == "oeq" for q in qs) >= 5
        assert all(q.verified_by for q in qs) and len(leaves) == len(qs) + len(spec.gates)
    else:
        assert len(leaves) >= (15 if task.scoring == "rubric" else 5)
        assert {lf.phase for lf in leaves if lf.effective_weight > 0} == {"modeling", "execution", "validation"}
    if task.scoring == "sota":
        assert task.paths.evaluator.is_file() and task.paths.sota.is_file()
    assert sum(lf.node.scoring_method == "deterministic" for lf in leaves) >= len(leaves) - 2
    for f in ("environment/Dockerfile", "environment/install.sh", "environment/paper/paper.md",
              "environment/starter_submission/reproduce.sh", "solution/reproduce.sh", "tests/TOLERANCES.md",
              "tests/determinism.toml", "tests/review.toml"):
        assert (root / f).is_file(), f
    assert {d.name.split("-")[0] for d in (root / "calibration").iterdir()} >= {"partial", "invalid"}
    record = json.loads((root / "tests" / "validation.json").read_text())
    assert record["passed"] and record["content_hash"] == task.content_hash(), "re-run `make validate`"
    assert record["reference_replay_sec"] <= 180


@pytest.mark.docker
def test_validation_under_docker_compares_every_score_with_the_bwrap_record(tmp_path):
    from tests.conftest import docker_engine_or_missing

    docker_engine_or_missing()
    task = _calibrated(tmp_path)
    assert validate_task(task, install=False).passed  # the bwrap record
    rec = validate_task(task, install=False, write=False, sandbox="docker")
    same = next(c for c in rec.checks if c.name == "same scores as under bwrap")
    assert rec.passed and same.passed and same.detail == "8 of 8 submissions score the same R"
    assert rec.sandbox == "docker" and rec.environment_digest.startswith("sha256:")  # the image's id
    # a record that disagrees (as a backend that scored differently would): the check fails and says where
    record = json.loads((task.paths.tests / "validation.json").read_text())
    record["runs"]["calibration/partial"]["R"] = 0.5
    same = _same_scores(rec.runs, ValidationRecord.model_validate(record))
    assert not same.passed and "calibration/partial: R 0.5000 -> 0.7500" in same.detail
