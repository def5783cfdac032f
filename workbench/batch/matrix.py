"""The batch matrix (MATRIX.toml): tasks × agent configurations × attempts.

```toml
tasks = ["tasks/h2-pes"]          # paths relative to this file
attempts = 2
engine = "papermill"              # or "inline"; the CLI may override
replay_timeout = 600              # optional, overrides every task's [metadata.replay] timeout_sec

[[agents]]
name = "fable"                    # the configuration's name (used in trial ids)
agent = "openai"                  # a registered agent
model = "fable-5"
options = { temperature = 0 }
fallback = "opus"                 # PaperBenchX §4.1: when this configuration refuses, run "opus" instead

[[agents]]
name = "opus"
agent = "openai"
model = "opus-5"
```
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import ValidationProblem, load_toml_model, lookup
from ..pricing import Prices

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CREDENTIAL_WORDS = {"key", "apikey", "secret", "password", "passwd", "token", "credential", "credentials"}


def is_credential(name: str) -> bool:
    """An option name that holds a credential (``api_key``, ``auth_token``), not one naming the variable
    that holds it (``api_key_env``, ``env_key``) nor a count (``max_tokens``)."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return bool(words) and words[-1] in _CREDENTIAL_WORDS and "env" not in words


def credential_options(options: dict[str, Any], prefix: str = "") -> list[str]:
    """The credential-named options, tables searched too (a CLI's own ``config``)."""
    found = []
    for k, v in options.items():
        if isinstance(v, dict):
            found += credential_options(v, f"{prefix}{k}.")
        elif is_credential(str(k)):
            found.append(f"{prefix}{k}")
    return found


class AgentConfig(BaseModel):
    """One agent configuration: which agent, with which model, options and budgets, and its fallback."""

    model_config = ConfigDict(extra="forbid")
    name: str
    agent: str
    model: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    fallback: str | None = None
    time_scale: float = Field(default=1.0, gt=0, description="multiplies the task's [agent] timeout_sec")
    max_turns: int | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0)
    prices: Prices | None = None
    network: Literal["none", "host", "endpoint"] | None = Field(
        default=None, description="session network; default per agent (endpoint: only the model API, bwrap)")

    @field_validator("name")
    @classmethod
    def _plain_name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError("use letters, digits, '.', '_' or '-' (it becomes part of trial ids)")
        return v

    @field_validator("options")
    @classmethod
    def _no_credentials(cls, v: dict[str, Any]) -> dict[str, Any]:
        # a configuration is written into trial.json, run.json and the session notebook: a key never is
        found = credential_options(v)
        if found:
            raise ValueError(f"option {found[0]!r} would write a credential into every record of the run; put it "
                             f"in an environment variable and pass its name instead (-o {found[0]}_env=NAME)")
        return v

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, v: str) -> str:
        from ..agents import AGENTS

        lookup(AGENTS, "agent", v, ValueError)
        return v

    @model_validator(mode="after")
    def _agent_accepts(self):
        from ..agents import AGENTS

        AGENTS[self.agent].check_config(self.model, self.options)  # before any trial is recorded
        return self


class Matrix(BaseModel):
    """MATRIX.toml: the tasks, the agent configurations and the attempts of a batch, and how it runs."""

    model_config = ConfigDict(extra="forbid")
    tasks: list[str] = Field(min_length=1)
    attempts: int = Field(default=1, ge=1)
    agents: list[AgentConfig] = Field(min_length=1)
    engine: Literal["papermill", "inline"] = "papermill"
    replay_timeout: float | None = Field(default=None, gt=0)
    sandbox: Literal["bwrap", "docker"] = "bwrap"
    judge_model: str | None = Field(default=None, description="LLM judge for judge leaves (else pending review)")

    @model_validator(mode="after")
    def _consistent(self):
        names = [a.name for a in self.agents]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"agents: duplicate configuration names {dup}")
        for a in self.agents:
            if a.fallback is not None and (a.fallback not in names or a.fallback == a.name):
                raise ValueError(f"agents: {a.name}.fallback = {a.fallback!r} must name another configuration")
        return self


def load_matrix(path: Path | str) -> tuple[Matrix, list[Path]]:
    """A matrix file, checked.

    Args:
        path: the matrix (MATRIX.toml).

    Returns:
        The :class:`Matrix` and its task directories (resolved against the matrix file's directory).

    Raises:
        ValidationProblem: an invalid field or a task that is not a task directory (each named).
    """
    path = Path(path)
    matrix = load_toml_model(path, Matrix)
    dirs, problems = [], []
    for i, t in enumerate(matrix.tasks):
        d = (path.parent / t).resolve() if not Path(t).is_absolute() else Path(t)
        if not (d / "task.toml").is_file():
            problems.append(f"{path}: tasks.{i}: {t!r} is not a task directory (no task.toml in {d})")
        dirs.append(d)
    if problems:
        raise ValidationProblem(problems)
    return matrix, dirs
