"""task.toml: one pydantic model, Harbor 1.1 compatible plus the workbench's [metadata.replay] table.

Harbor sections and keys we do not use are kept (``extra="allow"``). The workbench's own replay limits
live under ``[metadata]``, the one table Harbor keeps whole (a top-level section of its own would be
dropped by Harbor's ``TaskConfig``), and are strict, so a typo there is an error, not an ignored limit.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, field_validator

Scoring = Literal["rubric", "sota", "qa"]
# what the hidden scoring service may tell an agent about an attempt (workbench.scoring.modes)
Feedback = Literal["replay", "R", "phases", "sota", "qa"]


class TaskSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    version: str = "1.0"
    description: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_str(cls, v):
        return str(v) if isinstance(v, int | float) else v


class AgentSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    timeout_sec: PositiveFloat = 3600.0


class VerifierSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    timeout_sec: PositiveFloat = 3600.0
    # the scoring service's answers (default per scoring mode: sota tasks their metrics, g and band;
    # rubric and qa tasks only the replay's outcome, so hidden leaves cannot be hill-climbed)
    feedback: list[Feedback] | None = None


class EnvironmentSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    cpus: PositiveInt = 2
    memory_mb: PositiveInt = 4096
    gpus: int = Field(default=0, ge=0)
    storage_mb: PositiveInt | None = None


_ROOT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SecretInputs(BaseModel):
    """``[metadata.replay.secret_inputs]``: a file ``reproduce.sh`` must read, which the verifier varies.

    The public replay gets the ``published`` values (the instruction documents them and the ranges the
    verifier draws from); a second clean replay gets values drawn by the task's private
    ``tests/secret_inputs.py`` (``draw(rng) -> dict | str``) that the submission could not know, so a cache,
    a fit to known answers or typed-in values cannot follow them (see :mod:`workbench.replay`).
    """

    model_config = ConfigDict(extra="forbid")
    path: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")  # package-relative
    published: str  # task-relative: the first replay's file (usually in the starter submission)
    timeout_sec: PositiveFloat | None = None  # the secret replay's limit (default: the replay's)

    @field_validator("path")
    @classmethod
    def _inside(cls, v: str) -> str:
        if any(part in (".", "..") for part in v.split("/")):
            raise ValueError(f"secret_inputs.path {v!r} must stay inside the package")
        return v


class ReplaySection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    timeout_sec: PositiveFloat = 1800.0
    outputs: list[str] = Field(default_factory=lambda: ["results"], min_length=1)
    max_processes: PositiveInt = 512
    max_open_files: PositiveInt = 4096
    max_file_mb: PositiveInt = 2048
    max_storage_mb: PositiveInt = 4096  # used when [environment] storage_mb is not set
    max_files: PositiveInt = 100_000
    max_log_mb: PositiveInt = 64
    # what of the delivered package survives into the replay as a source: globs (relative to the package);
    # unset, the default rule keeps code and small config files only (see workbench.replay.is_source)
    sources: list[str] | None = None
    secret_inputs: SecretInputs | None = None

    @field_validator("outputs")
    @classmethod
    def _plain_roots(cls, roots: list[str]) -> list[str]:
        for r in roots:
            if not _ROOT.match(r) or r in (".", ".."):
                raise ValueError(
                    f"output root {r!r} must be a plain top-level directory name (letters, digits, . _ -)"
                )
        if len(set(roots)) != len(roots):
            raise ValueError("output roots must be unique")
        return roots


class MetadataSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    domain: str | None = None
    field: str | None = None
    paper: str | None = None
    scoring: Scoring = "rubric"
    tags: list[str] = Field(default_factory=list)
    replay: ReplaySection = Field(default_factory=ReplaySection)


class TaskConfig(BaseModel):
    """The parsed task.toml."""

    model_config = ConfigDict(extra="allow")
    schema_version: str | None = None
    task: TaskSection
    metadata: MetadataSection = Field(default_factory=MetadataSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    # an old task.toml's [replay] would otherwise be kept as an unknown section and its limits ignored
    old_replay: None = Field(default=None, alias="replay", exclude=True)

    @field_validator("old_replay", mode="before")
    @classmethod
    def _moved(cls, v):
        raise ValueError("[replay] is now [metadata.replay] (Harbor keeps [metadata] and drops sections it does "
                         "not know): rename the table")

    @property
    def replay(self) -> ReplaySection:
        """The replay's limits and output roots (``[metadata.replay]``)."""
        return self.metadata.replay
