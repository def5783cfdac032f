"""run.json: what a run directory was started with, so that adding to it never mixes versions.

A batch locks its matrix (less how it is executed) and each task's content hash, and ``--resume`` is
refused when either changed; `workbench run` records each task's hash and each configuration by name, and
refuses a changed one under the same name; a synthetic run (analysis.synthetic) says so and how it was
generated. Every field has a default, so the run.json of any earlier version still loads.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import load_json_model
from ..io import atomic_write_json
from ..paths import RunPaths


class RunSpec(BaseModel):
    """run.json"""

    model_config = ConfigDict(extra="forbid")
    matrix: dict[str, Any] | None = Field(default=None, description="a batch's matrix, less how it is executed")
    tasks: dict[str, str] = Field(default_factory=dict, description="task id -> content hash")
    configs: dict[str, dict[str, Any]] = Field(default_factory=dict,
                                               description="`workbench run`: configuration name -> configuration")
    created_at: str | None = None
    workbench_version: str | None = None
    synthetic: bool = False
    generator: dict[str, Any] | None = Field(default=None, description="a synthetic run's generator parameters")

    @property
    def configurations(self) -> dict[str, dict[str, Any]]:
        """Every configuration by name: a batch's matrix agents and `workbench run`'s configs."""
        agents = (self.matrix or {}).get("agents") or []
        found = {a["name"]: a for a in agents if isinstance(a, dict) and "name" in a}
        return found | {n: c for n, c in self.configs.items() if isinstance(c, dict)}


def read_run_spec(run: RunPaths) -> RunSpec | None:
    """The run's lock, or None where no run was started; a malformed run.json is a ValidationProblem
    naming the file and the field."""
    return load_json_model(run.run_json, RunSpec) if run.run_json.is_file() else None


def write_run_spec(run: RunPaths, lock: RunSpec) -> None:
    atomic_write_json(run.run_json, lock.model_dump(exclude_defaults=True))
