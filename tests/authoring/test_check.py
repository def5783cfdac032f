import json

from tests.conftest import DEMO, write_task
from workbench.authoring.check import check_task
from workbench.task import load_task


def test_the_demo_task_is_complete():
    rep = check_task(DEMO)
    assert rep.ok, rep.errors
    assert [w.split(": ", 1)[1] for w in rep.warnings] == ["1 of 2 expert review sign-offs"]
    task = load_task(DEMO)
    assert task.config.metadata.scoring == "rubric"
    assert task.config.replay.outputs == ["results"]
    assert len(task.rubric.leaves) >= 12
    assert {lf.phase for lf in task.rubric.leaves} == {"modeling", "execution", "validation"}


def test_a_minimal_task_passes(tmp_path):
    assert check_task(write_task(tmp_path / "t")).ok


def _errors(root) -> str:
    rep = check_task(root)
    assert not rep.ok
    return "\n".join(rep.errors)


def test_malformed_toml_names_the_file(tmp_path):
    root = write_task(tmp_path / "t")
    (root / "task.toml").write_text("[task\nname = 1")
    assert f"{root / 'task.toml'}: not valid TOML" in _errors(root)


def test_wrong_types_and_unknown_replay_keys_name_the_field(tmp_path):
    root = write_task(tmp_path / "t")
    text = (root / "task.toml").read_text()
    text = text.replace("cpus = 1", 'cpus = "two"').replace("max_processes", "outptus = []\nmax_processes")
    (root / "task.toml").write_text(text)
    errors = _errors(root)
    assert "task.toml: environment.cpus:" in errors
    assert "task.toml: metadata.replay.outptus: unknown key (did you mean outputs?)" in errors


def test_a_top_level_replay_section_is_refused_not_ignored(tmp_path):
    """Its limits would otherwise be kept as an unknown section and the defaults used instead."""
    root = write_task(tmp_path / "t")
    (root / "task.toml").write_text((root / "task.toml").read_text().replace("[metadata.replay]", "[replay]"))
    assert "task.toml: replay: [replay] is now [metadata.replay]" in _errors(root)


def test_output_roots_must_be_plain_names(tmp_path):
    root = write_task(tmp_path / "t", outputs=("../escape",))
    assert "replay.outputs" in _errors(root)


def test_missing_instruction_and_environment(tmp_path):
    root = write_task(tmp_path / "t")
    (root / "instruction.md").unlink()
    (root / "environment" / "Dockerfile").unlink()
    errors = _errors(root)
    assert "instruction.md: file not found" in errors
    assert "environment: needs install.sh (local sandbox) or Dockerfile" in errors


def test_rubric_problems_and_bad_check_specs_name_the_leaf(tmp_path):
    rubric = {"id": "r", "sub_tasks": [
        {"id": "a", "weight": 1, "task_category": "Modeling", "check": {"kind": "teleport"}},
        {"id": "b", "weight": 1, "task_category": "Execution", "check": {"kind": "json_value", "path": "x.json"}},
        {"id": "c", "weight": 1, "task_category": "Validation", "check": {"kind": "task", "name": "nope"}},
    ]}
    errors = _errors(write_task(tmp_path / "t", rubric=rubric))
    assert "sub_tasks[0] (id a): check.kind: unknown kind 'teleport'" in errors
    assert "sub_tasks[1] (id b): check.key: Field required" in errors
    assert "sub_tasks[2] (id c): check.name: no @task_check named 'nope'" in errors


def test_a_rubric_whose_weights_sum_to_zero_fails_the_check(tmp_path):
    rubric = {"id": "r", "sub_tasks": [{"id": "a", "weight": 0, "task_category": "Modeling"}]}
    assert "weights of the children sum to 0" in _errors(write_task(tmp_path / "t", rubric=rubric))


def test_checks_py_that_does_not_import_is_an_error(tmp_path):
    root = write_task(tmp_path / "t", checks_py="import does_not_exist\n")
    assert "checks.py: failed to import: ModuleNotFoundError" in _errors(root)


def test_missing_rubric_is_an_error_for_rubric_tasks(tmp_path):
    root = write_task(tmp_path / "t")
    (root / "tests" / "rubric.json").unlink()
    assert "rubric.json: file not found" in _errors(root)


def test_content_hash_changes_with_any_file(tmp_path):
    root = write_task(tmp_path / "t")
    h1 = load_task(root).content_hash()
    (root / "tests" / "rubric.json").write_text(json.dumps({"id": "x", "task_category": "Modeling"}))
    assert load_task(root).content_hash() != h1


def _reads(*leaves: tuple[str, dict]) -> dict:
    return {"id": "r", "sub_tasks": [{"id": i, "weight": 1, "task_category": c, **extra}
                                     for (i, extra), c in zip(leaves, ("Modeling", "Execution", "Validation"),
                                                              strict=False)]}


def test_a_rubric_reading_a_root_the_replay_does_not_regenerate_fails(tmp_path):
    rubric = _reads(("ok", {"check": {"kind": "file_exists", "path": "results/value.json"}}),
                    ("stale", {"evidence_inputs": [{"path": "submission/outputs/metrics.json"}]}),
                    ("glob", {"check": {"kind": "file_exists", "path": "*.json"}}))
    root = write_task(tmp_path / "t", rubric=rubric)
    errors = _errors(root).splitlines()
    assert len(errors) == 2
    assert errors[0].startswith(f"{root / 'tests' / 'rubric.json'}: sub_tasks[1] (id stale): "
                                "evidence_inputs[0].path 'submission/outputs/metrics.json': 'outputs' is neither")
    assert "[metadata.replay] outputs root (results) nor a source in solution/" in errors[0]
    assert "(id glob): check.path '*.json': '*.json' (a glob counts by its top-level component)" in errors[1]
    rubric["sub_tasks"][2]["check"]["path"] = "outputs/*.json"  # declaring the root fixes both leaves
    (root / "tests" / "rubric.json").write_text(json.dumps(rubric))
    (root / "task.toml").write_text((root / "task.toml").read_text().replace('["results"]', '["results", "outputs"]'))
    assert check_task(root).ok, check_task(root).errors


def test_a_rubric_may_read_the_sources_the_solution_delivers(tmp_path):
    rubric = _reads(("src", {"evidence_inputs": [{"path": "submission/src/model.py"}, {"path": "reproduce.sh"}]}),
                    ("log", {"check": {"kind": "log_pattern", "pattern": "done"}}),
                    ("out", {"check": {"kind": "file_exists", "path": "submission/results/*.json"}}))
    root = write_task(tmp_path / "t", rubric=rubric)
    assert "'src' is neither" in _errors(root)  # the solution has no src/ yet
    (root / "solution" / "src").mkdir()
    (root / "solution" / "src" / "model.py").write_text("x = 1\n")
    assert check_task(root).ok, check_task(root).errors


def test_a_qa_task_whose_answers_file_is_outside_the_output_roots_fails_once(tmp_path):
    from tests.scoring.modes import write_qa_task

    root = write_qa_task(tmp_path / "t", {"m1": ["A"]})
    assert check_task(root).ok, check_task(root).errors
    qs = json.loads((root / "tests" / "questions.json").read_text())
    (root / "tests" / "questions.json").write_text(json.dumps({**qs, "answers": "answers/answers.json"}))
    errors = _errors(root).splitlines()
    assert len(errors) == 1 and errors[0].startswith(f"{root / 'tests' / 'questions.json'}: sub_tasks[0] (id m1): ")
    assert "'answers/answers.json': 'answers' is neither" in errors[0] and "(also read by m2, o1, o2)" in errors[0]


def test_declared_data_sources_with_only_provenance_gates_warn_of_laundering(tmp_path):
    """A task that lets data in and only asks which process wrote the results is told how a shipped result
    would pass, and what closes it; a recompute check silences it."""
    rubric = {"id": "r", "sub_tasks": [
        {"id": "g", "weight": 1, "task_category": "Execution", "gate": True,
         "check": {"kind": "written_by", "path": "results/value.json", "program": "python3"}},
        {"id": "v", "weight": 1, "task_category": "Validation",
         "check": {"kind": "json_value", "path": "results/value.json", "key": "value", "target": 42}}]}
    root = write_task(tmp_path / "t", rubric=rubric)
    (root / "task.toml").write_text((root / "task.toml").read_text() + 'sources = ["src/**", "reproduce.sh"]\n')
    warned = [w for w in check_task(root).warnings if "can ship data" in w]
    assert len(warned) == 1 and "['src/**']" in warned[0] and "add a recompute check" in warned[0], warned
    rubric["sub_tasks"][1]["check"] = {"kind": "recompute", "function": "value"}
    (root / "tests" / "rubric.json").write_text(json.dumps(rubric))
    assert not [w for w in check_task(root).warnings if "can ship data" in w]
