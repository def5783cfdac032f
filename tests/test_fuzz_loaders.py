"""Property-based fuzzing of the loaders people hand-edit: task.toml, rubric.json, the batch matrix.

Whatever the input, a loader returns its model or raises ValidationProblem whose every line names the
file (and, for a schema problem, the field); never a traceback from deep inside."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import MINI_RUBRIC, write_task
from workbench.batch.matrix import load_matrix
from workbench.errors import ValidationProblem, WorkbenchError
from workbench.rubric import load_rubric
from workbench.task.package import load_config

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
WORK = Path(tempfile.mkdtemp(prefix="workbench-fuzz-"))
TASK = write_task(WORK / "task")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
keys = st.one_of(st.sampled_from(["task", "name", "version", "metadata", "scoring", "field", "agent",
                                  "timeout_sec", "environment", "cpus", "memory_mb", "gpus", "storage_mb",
                                  "replay", "outputs", "max_processes", "max_files", "tasks", "attempts",
                                  "agents", "model", "options", "fallback", "time_scale", "network",
                                  "id", "requirements", "weight", "sub_tasks", "task_category", "check",
                                  "kind", "path", "gate", "method", "scale", "evidence_inputs"]),
                 st.text(min_size=1, max_size=8))
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(keys, inner, max_size=5)), max_leaves=25)
toml_scalars = st.one_of(st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False), st.text(max_size=12))
toml_values = st.recursive(toml_scalars, lambda inner: st.one_of(st.lists(toml_scalars, max_size=4),
                                                                 st.dictionaries(keys, inner, max_size=5)),
                           max_leaves=25)
toml_docs = st.dictionaries(keys, toml_values, max_size=6)


def _write(name: str, text: str | bytes) -> Path:
    d = Path(tempfile.mkdtemp(dir=WORK))
    p = d / name
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    return p


def _names_the_file(exc: Exception, path: Path) -> None:
    problems = exc.problems if isinstance(exc, ValidationProblem) else [str(exc)]
    assert problems, "an error with no message"
    for line in problems:
        assert str(path) in line, line
        if ": not valid" not in line and "file not found" not in line and "not a task directory" not in line:
            loc, sep, msg = line[len(str(path)) + 2:].partition(": ")
            assert line.startswith(f"{path}: ") and loc.strip() and sep and msg, f"no field named: {line}"


def _valid_task_toml() -> dict:
    return {"task": {"name": "x/y"}, "metadata": {"scoring": "rubric", "replay": {"outputs": ["results"]}},
            "environment": {"cpus": 1}}


@pytest.mark.slow
@FUZZ
@given(st.one_of(toml_docs.map(tomli_w.dumps),
                 st.builds(lambda base, sect, extra: tomli_w.dumps({**base, sect: extra}),
                           st.just(_valid_task_toml()), st.sampled_from(["task", "metadata", "environment", "replay",
                                                                         "agent"]),
                           st.dictionaries(keys, toml_values, max_size=4)),
                 st.text(max_size=200), st.binary(max_size=100)))
def test_task_toml_loader(text):
    path = _write("task.toml", text)
    try:
        load_config(path)
    except ValidationProblem as exc:
        _names_the_file(exc, path)


@FUZZ
@given(st.one_of(json_values.map(json.dumps),
                 st.builds(lambda leaf: json.dumps({**MINI_RUBRIC, "sub_tasks": [*MINI_RUBRIC["sub_tasks"], leaf]}),
                           st.dictionaries(keys, json_values, max_size=6)),
                 st.text(max_size=200), st.binary(max_size=100)))
def test_rubric_loader(text):
    path = _write("rubric.json", text)
    try:
        load_rubric(path)
    except ValidationProblem as exc:
        _names_the_file(exc, path)


@pytest.mark.slow
@FUZZ
@given(st.one_of(toml_docs.map(tomli_w.dumps),
                 st.builds(lambda agents, extra: tomli_w.dumps({"tasks": [str(TASK)], "agents": agents, **extra}),
                           st.lists(st.dictionaries(keys, toml_values, max_size=5), max_size=3),
                           st.dictionaries(keys, toml_values, max_size=3)),
                 st.text(max_size=200)))
def test_matrix_loader(text):
    path = _write("matrix.toml", text)
    try:
        load_matrix(path)
    except (ValidationProblem, WorkbenchError) as exc:
        _names_the_file(exc, path)
