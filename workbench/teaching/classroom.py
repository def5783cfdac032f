"""A class on one task: each student is the agent of a session of their own, scored exactly as a model is,
and the report compares the students with the model configurations the teacher chose.

It is a batch like any other (:func:`workbench.batch.run.run_batch`): the matrix is the task, one ``human``
configuration per student (named after them, ``options.person`` their name) and the teacher's model
configurations, written to ``OUT/class.toml`` so the run can be resumed and read as any run. Students attach
with ``workbench attach OUT --name NAME`` from a terminal of the machine, or from ``workbench view``'s trial
page in a browser. Each open shell holds its task's cores like any session, so a class runs as many students at
once as the machine has cores for (``workers``); the others wait for a free slot.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..batch.matrix import AgentConfig, Matrix, load_matrix
from ..errors import WorkbenchError


def student_name(name: str) -> str:
    """A configuration name for a student (letters, digits, '.', '_', '-'); their name as typed stays the person."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name.strip()).strip("-").lower()
    if not slug:
        raise WorkbenchError(f"a student needs a name with a letter or digit in it (got {name!r})")
    return slug


def class_matrix(task_dir: Path, students: list[str], compare: Path | None = None) -> Matrix:
    """The matrix of a class: one attempt of ``task_dir`` per student and per configuration of ``compare``.

    Args:
        task_dir: the task the class works on.
        students: the students' names (each becomes a ``human`` configuration).
        compare: a matrix whose configurations (and engine, sandbox, judge) the students are compared with.

    Returns:
        The checked :class:`~workbench.batch.matrix.Matrix`.
    """
    base = load_matrix(compare)[0] if compare is not None else None
    people = [AgentConfig(name=student_name(s), agent="human", options={"person": s.strip()}) for s in students]
    settings = base.model_dump(exclude={"tasks", "attempts", "agents"}) if base else {}
    return Matrix.model_validate({**settings, "tasks": [str(Path(task_dir).resolve())], "attempts": 1,
                                  "agents": [*people, *(base.agents if base else [])]})


def write_matrix(matrix: Matrix, path: Path) -> Path:
    """``matrix`` as MATRIX.toml (what `workbench batch` reads)."""
    data = matrix.model_dump(exclude_none=True)
    agents = data.pop("agents")
    lines = [f"{k} = {_toml(v)}" for k, v in data.items()]
    for a in agents:
        lines += ["", "[[agents]]", *(f"{k} = {_toml(v)}" for k, v in a.items() if v not in ({}, None))]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Path(path)


def _toml(value: Any) -> str:
    """A TOML value: strings as basic strings (JSON's escapes are TOML's), tables inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items() if v is not None) + " }"
    raise WorkbenchError(f"cannot write {value!r} into a matrix")
