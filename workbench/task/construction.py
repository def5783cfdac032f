"""Construction records kept in a task's tests/ (PaperBenchX §3.3): one pydantic model per file.

    tests/determinism.toml   what may differ between two reference replays, and by how much (authored)
    tests/review.toml        expert review sign-offs: who, when, what (authored)
    tests/validation.json    the last `workbench task validate` result (written)
    tests/freeze.json        content hashes recorded by `workbench task freeze` (written)

None of these change how a task is scored, so they are left out of the task's content hash: validating
or signing a review does not make a running batch see a "changed task". Each is read here, through its
model; a malformed record is a :class:`~workbench.errors.ValidationProblem` naming the file and field.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import load_json_model, load_toml_model
from ..paths import TaskPaths

_HERE = TaskPaths(Path())
RECORD_FILES = tuple(p.as_posix() for p in (_HERE.determinism, _HERE.review_log, _HERE.validation, _HERE.freeze))


class Tolerance(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rel: float = Field(default=0.0, ge=0)
    abs: float = Field(default=0.0, ge=0)


class Determinism(BaseModel):
    """tests/determinism.toml: evidence files allowed to differ between two reference replays."""

    model_config = ConfigDict(extra="forbid")
    ignore: list[str] = Field(default_factory=list, description="globs (evidence paths) whose bytes may differ")
    tolerances: dict[str, Tolerance] = Field(default_factory=dict,
                                             description="glob -> numeric tolerance for CSV/JSON files")
    reason: str = ""


class Review(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reviewer: str = Field(min_length=1)
    date: dt.date
    scope: str = Field(min_length=1, description="what was reviewed: science, fairness, rubric, ...")
    verdict: str = "approved"
    notes: str = ""


class ReviewLog(BaseModel):
    """tests/review.toml: [[review]] entries."""

    model_config = ConfigDict(extra="forbid")
    review: list[Review] = Field(default_factory=list)

    @property
    def reviewers(self) -> list[str]:
        return sorted({r.reviewer for r in self.review if r.verdict == "approved"})


class CheckResult(BaseModel):
    name: str
    passed: bool
    detail: str


class ValidationRecord(BaseModel):
    """tests/validation.json"""

    task: str
    content_hash: str
    passed: bool
    checks: list[CheckResult]
    runs: dict[str, dict[str, Any]]
    determinism: dict[str, Any]
    reference_replay_sec: float
    secret_replay_sec: float | None = None  # the reference's replay with secret inputs (tasks that vary inputs)
    environment_digest: str
    sandbox: str = "bwrap"  # the backend the replays ran under (records before it was kept: bwrap)
    validated_at: str
    workbench_version: str


class FreezeRecord(BaseModel):
    """tests/freeze.json"""

    task: str
    content_hash: str
    files: dict[str, str]
    validation_passed: bool
    reviewers: list[str]
    frozen_at: str
    workbench_version: str


def read_determinism(paths: TaskPaths) -> Determinism:
    """tests/determinism.toml, or nothing may differ when the task declares none."""
    return load_toml_model(paths.determinism, Determinism) if paths.determinism.is_file() else Determinism()


def read_review_log(paths: TaskPaths) -> ReviewLog:
    """tests/review.toml, or no sign-off yet."""
    return load_toml_model(paths.review_log, ReviewLog) if paths.review_log.is_file() else ReviewLog()


def read_validation(paths: TaskPaths) -> ValidationRecord | None:
    """tests/validation.json, or None when the task was never validated."""
    return load_json_model(paths.validation, ValidationRecord) if paths.validation.is_file() else None


def read_freeze(paths: TaskPaths) -> FreezeRecord | None:
    """tests/freeze.json, or None when the task was never frozen."""
    return load_json_model(paths.freeze, FreezeRecord) if paths.freeze.is_file() else None
