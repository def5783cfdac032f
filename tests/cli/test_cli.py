"""The command line as users run it: outputs, exit codes, and errors without tracebacks."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import DEMO, EXTERNAL, REPO, run_cli, write_task


def _clean_error(proc, *needles: str) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    for n in needles:
        assert n in proc.stderr, proc.stderr


def test_rubric_stats_json_has_the_documented_shape():
    proc = run_cli("rubric", "stats", str(EXTERNAL / "paperbenchx/12-mapgpt-r2r/tests/rubric.json"), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"leaves": 13, "phases": {"modeling": 0.25, "execution": 0.2,
                                                                "validation": 0.55}, "weight_sum": 1.0,
                                       "phase_leaves": {"modeling": 5, "execution": 3, "validation": 5},
                                       "methods": {"judge": 13}, "diagnostic_leaves": 1}


def test_rubric_stats_human_output_counts_leaves_per_phase():
    from workbench.rubric import load_rubric

    proc = run_cli("rubric", "stats", str(DEMO / "tests/rubric.json"))
    assert proc.returncode == 0
    leaves = load_rubric(DEMO / "tests/rubric.json").leaves  # the demo's rubric grows as the task is hardened
    val = [lf for lf in leaves if lf.phase == "validation"]
    assert f"{len(leaves)} leaves" in proc.stdout
    assert f"validation {len(val):>9}    {float(sum(lf.effective_weight for lf in val)):.4f}" in proc.stdout


@pytest.mark.parametrize("name", ["rice", "pinn", "semantic-self-consistency"])
def test_rubric_aggregate_prints_the_root_score(name):
    path = EXTERNAL / "paperbench/graded" / f"{name}.json"
    proc = run_cli("rubric", "aggregate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) == pytest.approx(json.loads(path.read_text())["score"], abs=1e-6)


@pytest.mark.slow
def test_task_list_and_check():
    ids = run_cli("task", "list", "tasks").stdout.split()
    assert ids == sorted(ids) and "h2-pes" in ids and len(ids) >= 7
    long = run_cli("task", "list", "tasks", "--long").stdout
    assert "computational chemistry" in long and "validated ok" in long
    modes = {line.split()[0]: line for line in long.splitlines()}
    assert " sota " in modes["wdbc-diagnosis"] and " qa " in modes["pbmc-questions"] and " rubric " in modes["h2-pes"]
    proc = run_cli("task", "check", str(DEMO))
    assert proc.returncode == 0 and proc.stdout.startswith("ok")


@pytest.mark.slow
def test_bad_inputs_get_clear_errors_not_tracebacks(tmp_path):
    root = write_task(tmp_path / "t")
    (root / "task.toml").write_text('[task]\nname = "x"\n[environment]\nmemory_mb = -5\n')
    _clean_error(run_cli("task", "check", str(root)), "task.toml: environment.memory_mb")
    bad = tmp_path / "rubric.json"
    bad.write_text(json.dumps({"id": "r", "sub_tasks": [{"id": "a", "weight": 0, "task_category": "Modeling"}]}))
    _clean_error(run_cli("rubric", "stats", str(bad)), "weights of the children sum to 0")
    bad.write_text(json.dumps({"id": "r", "sub_tasks": [{"id": "a", "task_category": "Cooking"}]}))
    _clean_error(run_cli("rubric", "stats", str(bad)), "task_category: unknown phase 'Cooking'")
    _clean_error(run_cli("rubric", "aggregate", str(EXTERNAL / "paperbench/rubrics/stochastic-interpolants.json")),
                 "a graded leaf needs a score")
    _clean_error(run_cli("replay", str(root), "--submission", str(tmp_path / "nope"), "--out", str(tmp_path / "o")),
                 "nope: not a directory")
    _clean_error(run_cli("run", str(DEMO), "--agent", "gpt-9", "--out", str(tmp_path / "runs")), "unknown agent")
    (tmp_path / "empty").mkdir()
    _clean_error(run_cli("score", str(DEMO), "--trial", str(tmp_path / "empty")), "the replay did not finish")


@pytest.mark.parametrize("args", [("task", "list", "/nope"), ("judge-eval", "/nope"), ("report", "/nope"),
                                  ("score", str(DEMO), "--trial", "/nope"), ("task", "check", "/nope")])
def test_paths_that_do_not_exist_are_usage_errors(args):
    proc = run_cli(*args)
    said = _plain(proc.stderr)
    assert proc.returncode in (1, 2) and "Traceback" not in said
    assert "'/nope' does not exist" in said or "/nope: not a directory" in said


def _plain(text: str) -> str:
    """The words of an error, whatever box the terminal drew around them."""
    return " ".join(text.replace("│", " ").replace("╭", " ").replace("╰", " ").replace("─", " ").split())


def test_a_sandbox_typo_is_refused_before_any_trial_is_recorded(tmp_path):
    proc = run_cli("run", str(DEMO), "--agent", "nop", "--out", str(tmp_path / "run"), "--sandbox", "dokcer")
    assert proc.returncode == 2 and "unknown sandbox 'dokcer'; known: bwrap, docker" in _plain(proc.stderr)
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_replay_and_score_commands(tmp_path):
    root = write_task(tmp_path / "t")
    trial = tmp_path / "trial"
    proc = run_cli("replay", str(root), "--submission", str(root / "solution"), "--out", str(trial))
    assert proc.returncode == 0, proc.stderr
    assert "replay succeeded: exit 0" in proc.stdout
    proc = run_cli("score", str(root), "--trial", str(trial))
    assert proc.returncode == 0 and "R = 0.7500" in proc.stdout and "1 pending_review" in proc.stdout
    proc = run_cli("replay", str(root), "--submission", str(root / "environment/starter_submission"),
                   "--out", str(tmp_path / "t2"))
    assert proc.returncode == 3 and "replay failed: exit 1" in proc.stdout


@pytest.mark.slow
def test_scoring_a_trial_against_another_task_is_refused_and_keeps_its_scores(tmp_path):
    root = write_task(tmp_path / "t")
    trial = tmp_path / "trial"
    run_cli("replay", str(root), "--submission", str(root / "solution"), "--out", str(trial))
    assert run_cli("score", str(root), "--trial", str(trial)).returncode == 0
    before = (trial / "scores.json").read_bytes()
    other = write_task(tmp_path / "other", rubric={"id": "o", "sub_tasks": [
        {"id": "X", "task_category": "Execution", "check": {"kind": "replay_succeeded"}}]})
    proc = run_cli("score", str(other), "--trial", str(trial))
    assert proc.returncode == 1 and "replayed for task 't', not 'other'" in proc.stderr
    assert "Traceback" not in proc.stderr and (trial / "scores.json").read_bytes() == before
    assert run_cli("score", str(other), "--trial", str(trial), "--force").returncode == 0  # when meant
    renamed = tmp_path / "renamed"  # the same task under another name is the same task
    shutil.copytree(root, renamed)
    assert run_cli("score", str(renamed), "--trial", str(trial)).returncode == 0


@pytest.mark.slow
def test_relative_paths_given_to_the_cli_reach_every_stage_resolved(tmp_path):
    """A relative --out (the README's own form) once reached the sota evaluator, which runs from the
    replayed submission's directory, as a relative path: every instance read "missing"."""
    from tests.scoring.modes import write_sota_task

    write_sota_task(tmp_path / "tasks" / "sota")
    proc = run_cli("run", "tasks/sota", "--agent", "oracle", "--out", "runs/rel", "--engine", "inline",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((tmp_path / "runs/rel/trials/sota__oracle__1/scores.json").read_text())
    assert scores["sota"]["band"] == "surpass" and scores["R"] == 1.0
    again = run_cli("score", "tasks/sota", "--trial", "runs/rel/trials/sota__oracle__1", "--json", cwd=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout)["R"] == 1.0


@pytest.mark.parametrize(("typo", "where"), [({"wieght": 3}, "sub_tasks.0.wieght"),
                                              ({"metod": "judge"}, "sub_tasks.0.metod")])
def test_a_rubric_typo_is_an_error_naming_the_file_and_the_node(tmp_path, typo, where):
    """A misspelt key once passed silently (a "wieght" left the phase weights as they were)."""
    rubric = {"id": "r", "sub_tasks": [{"id": "A", "task_category": "Modeling", **typo},
                                       {"id": "B", "task_category": "Execution"}]}
    root = write_task(tmp_path / "t", rubric=rubric)
    proc = run_cli("task", "check", str(root))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"{root / 'tests' / 'rubric.json'}: {where}: Extra inputs are not permitted" in proc.stderr


@pytest.mark.slow
def test_run_into_an_existing_attempt_says_so_unless_forced(tmp_path):
    root = write_task(tmp_path / "t")
    args = ("run", str(root), "--agent", "oracle", "--out", str(tmp_path / "run"), "--engine", "inline")
    assert run_cli(*args).returncode == 0
    proc = run_cli(*args)
    assert proc.returncode == 1 and "attempt 1 of 'oracle' on t is already there; --attempt 2" in proc.stderr
    assert run_cli(*args, "--force").returncode == 0 and run_cli(*args, "--attempt", "2").returncode == 0


def test_task_schema_prints_each_authored_format_and_the_bundled_files_conform():
    import tomllib

    import jsonschema

    from workbench.task import find_tasks

    schemas = {}
    for fmt in ("rubric", "task", "questions", "sota", "discovery", "matrix"):
        proc = run_cli("task", "schema", fmt)
        assert proc.returncode == 0, proc.stderr
        schemas[fmt] = json.loads(proc.stdout)
        jsonschema.Draft202012Validator.check_schema(schemas[fmt])
    rubrics = 0
    for root in find_tasks(REPO / "tasks"):
        jsonschema.validate(tomllib.loads((root / "task.toml").read_text()), schemas["task"])
        if (root / "tests" / "rubric.json").is_file():  # a qa task's leaves come from its questions
            jsonschema.validate(json.loads((root / "tests" / "rubric.json").read_text()), schemas["rubric"])
            rubrics += 1
        for fmt in ("questions", "sota", "discovery"):
            if (root / "tests" / f"{fmt}.json").is_file():
                jsonschema.validate(json.loads((root / "tests" / f"{fmt}.json").read_text()), schemas[fmt])
    assert rubrics >= 8
    with pytest.raises(jsonschema.ValidationError, match="'weight'"):  # the schema is not vacuous
        jsonschema.validate({"id": "r", "weight": "heavy"}, schemas["rubric"])
    bad = run_cli("task", "schema", "rubrics")
    assert bad.returncode == 2
    assert bad.stderr.strip() == ("error: no format 'rubrics'; choose one of rubric, task, questions, sota, "
                                  "discovery, matrix")
