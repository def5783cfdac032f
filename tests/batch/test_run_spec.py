"""run.json: the file a batch and `workbench run` write is a RunSpec, and a malformed one is one line."""

from __future__ import annotations

import json

import pytest

from tests.conftest import MATRIX, run_cli, write_task
from workbench.analysis.synthetic import is_synthetic, synthesize
from workbench.batch.run import run_batch
from workbench.batch.run_spec import RunSpec, read_run_spec
from workbench.errors import ValidationProblem
from workbench.paths import RunPaths


def _round_trips(run: RunPaths) -> RunSpec:
    """The file as written validates (no field unknown to the model) and is exactly what the model writes."""
    spec = RunSpec.model_validate_json(run.run_json.read_text())
    assert json.loads(run.run_json.read_text()) == json.loads(json.dumps(spec.model_dump(exclude_defaults=True)))
    return spec


@pytest.mark.slow
def test_a_batchs_run_json_is_a_run_lock(tmp_path):
    task = write_task(tmp_path / "mini")
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(MATRIX.format(task=task, attempts=1))
    run_batch(matrix, tmp_path / "run", workers=1, engine="inline", progress=False)
    spec = _round_trips(RunPaths(tmp_path / "run"))
    assert [a["name"] for a in spec.matrix["agents"]] == ["oracle", "nop"] and set(spec.tasks) == {"mini"}
    assert spec.created_at and spec.workbench_version and set(spec.configurations) == {"oracle", "nop"}


@pytest.mark.slow
def test_a_single_runs_run_json_is_a_run_lock_and_a_malformed_one_is_one_line(tmp_path):
    task = write_task(tmp_path / "mini")
    out = tmp_path / "run"
    proc = run_cli("run", str(task), "--agent", "oracle", "--out", str(out), "--engine", "inline")
    assert proc.returncode == 0, proc.stderr
    spec = _round_trips(RunPaths(out))
    assert spec.matrix is None and set(spec.tasks) == {"mini"} and spec.configs["oracle"]["agent"] == "oracle"

    RunPaths(out).run_json.write_text('{"tasks": {"mini": 7}, "configs": {}}')
    proc = run_cli("run", str(task), "--agent", "nop", "--out", str(out), "--engine", "inline")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("error:")] == [
        f"error: {RunPaths(out).run_json}: tasks.mini: Input should be a valid string"]


def test_a_synthetic_runs_run_json_is_a_run_lock(tmp_path):
    synthesize(tmp_path / "syn", configs=2, tasks=2, leaves=6, fields=1, seed=3)
    spec = _round_trips(RunPaths(tmp_path / "syn"))
    assert spec.synthetic and spec.generator["seed"] == 3 and is_synthetic(tmp_path / "syn")


def test_a_run_json_of_another_shape_is_refused_naming_the_field(tmp_path):
    run = RunPaths(tmp_path)
    assert read_run_spec(run) is None  # no run started here
    run.run_json.write_text('{"matrix": {"agents": []}, "taks": {}}')
    with pytest.raises(ValidationProblem) as exc:
        read_run_spec(run)
    assert exc.value.problems == [f"{run.run_json}: taks: Extra inputs are not permitted"]
    run.run_json.write_text("{not json")
    with pytest.raises(ValidationProblem, match="run.json: not valid JSON"):
        read_run_spec(run)
    assert not is_synthetic(tmp_path)  # the report's banner check does not fail on it
