"""task.toml: one pydantic model, Harbor 1.1 compatible plus the workbench's [metadata.replay] table.

Strict where a key could be a typo of ours: an unknown key in ``[task]``, ``[environment]``, ``[agent]``,
``[verifier]`` or ``[metadata.replay]`` (or an unknown top-level table) is an error naming the key and the
closest known one ("did you mean memory_mb?"), so a mistyped limit never falls back to its default in
silence. Every key Harbor's own ``TaskConfig`` accepts stays accepted (``HARBOR_KEYS``, checked against
Harbor's models by tests/interop), so imported packages load; the workbench does not use most of them.
Free-form data lives under ``[metadata]``, the one table Harbor keeps whole, which is also where the
workbench's own replay limits live (a top-level section of its own would be dropped by Harbor).
"""

from __future__ import annotations

import re
from difflib import get_close_matches
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from ..errors import UnknownKeys

Scoring = Literal["rubric", "sota", "qa", "discovery"]
# what the hidden scoring service may tell an agent about an attempt (workbench.scoring.modes)
Feedback = Literal["replay", "R", "phases", "sota", "qa", "discovery"]


# the keys Harbor 0.25's TaskConfig accepts per table (its deprecated spellings included); the workbench
# keeps them (extra="allow") without using most of them
HARBOR_KEYS: dict[str, frozenset[str]] = {
    "": frozenset({"schema_version", "version", "task", "metadata", "verifier", "agent", "environment", "solution",
                   "source", "multi_step_reward_strategy", "steps", "artifacts"}),
    "task": frozenset({"name", "version", "description", "authors", "keywords"}),
    "agent": frozenset({"network_mode", "allowed_hosts", "timeout_sec", "user", "env"}),
    "verifier": frozenset({"network_mode", "allowed_hosts", "timeout_sec", "env", "user", "environment_mode",
                           "environment", "collect"}),
    "environment": frozenset({"network_mode", "allowed_hosts", "build_timeout_sec", "docker_image", "os", "cpus",
                              "memory_mb", "storage_mb", "gpus", "gpu_types", "tpu", "mcp_servers", "env",
                              "skills_dir", "healthcheck", "workdir", "allow_internet", "memory", "storage"}),
}


class _Strict(BaseModel):
    """A table whose unknown keys are errors with a suggestion; ``_table`` names its Harbor key set."""

    _table: ClassVar[str | None] = None

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = {f.alias or n for n, f in cls.model_fields.items()} | HARBOR_KEYS.get(cls._table, frozenset())
            unknown = [k for k in data if k not in known]
            if unknown:
                raise UnknownKeys([(str(k), next(iter(get_close_matches(str(k), sorted(known), n=1, cutoff=0.6)),
                                                 None)) for k in unknown],
                                  "free-form data goes under [metadata]" if cls._table is not None else "")
        return data


class TaskSection(_Strict):
    model_config = ConfigDict(extra="allow")
    _table = "task"
    name: str
    version: str = "1.0"
    description: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_str(cls, v):
        return str(v) if isinstance(v, int | float) else v


class AgentSection(_Strict):
    model_config = ConfigDict(extra="allow")
    _table = "agent"
    timeout_sec: PositiveFloat = 3600.0


class VerifierSection(_Strict):
    model_config = ConfigDict(extra="allow")
    _table = "verifier"
    timeout_sec: PositiveFloat = 3600.0
    # the scoring service's answers (default per scoring mode: sota tasks their metrics, g and band;
    # rubric and qa tasks only the replay's outcome, so hidden leaves cannot be hill-climbed)
    feedback: list[Feedback] | None = None


class EnvironmentSection(_Strict):
    model_config = ConfigDict(extra="allow")
    _table = "environment"
    cpus: PositiveInt = 2
    memory_mb: PositiveInt = 4096
    gpus: int = Field(default=0, ge=0)
    storage_mb: PositiveInt | None = None

    @model_validator(mode="before")
    @classmethod
    def _harbor_sizes(cls, data: Any) -> Any:
        """Harbor's deprecated ``memory``/``storage`` ("2G", "512M") become the limits they name, as Harbor
        maps them: accepted and then ignored, they would leave the default limit in place."""
        if isinstance(data, dict):
            for old, new in (("memory", "memory_mb"), ("storage", "storage_mb")):
                if old in data:
                    data = dict(data)
                    mb = _size_mb(data.pop(old), old)
                    if data.get(new, mb) != mb:
                        raise ValueError(f"{old} = {mb} MB and {new} = {data[new]} disagree: keep {new}")
                    data[new] = mb
        return data


def _size_mb(v: Any, key: str) -> int:
    """Harbor's size strings: a number with K, M or G (binary units, as Harbor reads them)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMG])B?\s*", str(v).upper())
    if not m:
        raise ValueError(f"{key} = {v!r}: write a size such as '2G' or '512M' (or {key}_mb = MB)")
    return int(float(m[1]) * {"K": 1 / 1024, "M": 1, "G": 1024}[m[2]])


_ROOT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SecretInputs(_Strict):
    """``[metadata.replay.secret_inputs]``: a file ``reproduce.sh`` must read, which the verifier varies.

    The public replay gets the ``published`` values (the instruction documents them and the ranges the
    verifier draws from); a second clean replay gets values drawn by the task's private
    ``tests/secret_inputs.py`` (``draw(rng) -> dict | str``) that the submission could not know, so a cache,
    a fit to known answers or typed-in values cannot follow them (see :mod:`workbench.replay.trial`).
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


class ReplaySection(_Strict):
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
    # unset, the default rule keeps code and small config files only (see workbench.replay.package.is_source)
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


class TaskConfig(_Strict):
    """The parsed task.toml."""

    model_config = ConfigDict(extra="allow")
    _table = ""
    schema_version: str | None = None
    task: TaskSection
    metadata: MetadataSection = Field(default_factory=MetadataSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    # an old task.toml's [replay] would otherwise be kept as an unknown section and its limits ignored
    old_replay: SkipJsonSchema[None] = Field(default=None, alias="replay", exclude=True)

    @field_validator("old_replay", mode="before")
    @classmethod
    def _moved(cls, v):
        raise ValueError("[replay] is now [metadata.replay] (Harbor keeps [metadata] and drops sections it does "
                         "not know): rename the table")

    @property
    def replay(self) -> ReplaySection:
        """The replay's limits and output roots (``[metadata.replay]``)."""
        return self.metadata.replay
