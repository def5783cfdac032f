"""What every verb of the CLI shares: its arguments as typed, the user's paths resolved once, stderr lines.

Every path a user types is resolved here at the edge, so the library never sees a relative path (a
relative --out once reached the sota evaluator, which runs from another working directory); paths a
command reads must exist, which typer says in one line before anything runs.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import typer

from ..errors import WorkbenchError, lookup

EXISTING_DIR = {"resolve_path": True, "exists": True, "file_okay": False}
TASK_DIR = typer.Argument(..., help="A task package directory (with task.toml).", **EXISTING_DIR)
RUN_DIR = typer.Argument(..., help="A run directory (with trials/).", **EXISTING_DIR)
TRIAL = typer.Argument(..., help="A trial directory (RUN/trials/TRIAL).", **EXISTING_DIR)
PATHS = typer.Argument(..., help="Task directories (or directories of tasks).", **EXISTING_DIR)

SANDBOX_HELP = "bwrap (local) or docker (needs an engine)."
JSON_HELP = "Machine-readable output."
JUDGE_HELP = "LLM judge model for judge leaves (endpoint: OPENAI_BASE_URL/OPENAI_API_KEY or WORKBENCH_JUDGE_*)."
LEAVES_HELP = "Also print every leaf: id, phase, status, score and its rationale on one line."


def sandbox_name(value: str | None) -> str | None:
    """Checked before any trial is recorded (a typo once became a trial's infra_error)."""
    from ..sandbox import SANDBOXES

    if value is not None:
        lookup(SANDBOXES, "sandbox", value, typer.BadParameter)
    return value


def echo_err(msg: str) -> None:
    typer.echo(msg, err=True)


def echo_lines(lines: list[str]) -> None:
    typer.echo("\n".join(lines))


def stage_line(text: str) -> None:
    """A trial's stages as they start and end (stderr: stdout stays the result). The line can carry text a
    submission shaped (an error naming its files, a warning from the kernel), so it is printed plain."""
    from .terminal import one_line

    echo_err(f"{datetime.now():%H:%M:%S}  {one_line(text)}")


def judge_settings(model: str | None):
    """The judge the user asked for, or None; one without an endpoint is refused before any trial is recorded."""
    from ..scoring.judge.settings import JudgeSettings

    return JudgeSettings.from_env(model)


def public_judge(model: str | None) -> dict | None:
    judge = judge_settings(model)
    return judge.public() if judge else None


def key_values(pairs: list[str]) -> dict:
    """KEY=VALUE pairs; a VALUE that parses as JSON is taken as JSON (numbers, lists, objects)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise WorkbenchError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def run_store(run_dir: Path, db: str | None):
    """The results store of a run folder (reviews live there); refused for a folder that is not a run."""
    from ..paths import RunPaths
    from ..store import Store

    if not RunPaths(run_dir).trials.is_dir():
        raise WorkbenchError(f"{run_dir}: no trials/ directory (not a run directory)")
    return Store.for_run(run_dir, db)
