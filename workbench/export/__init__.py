"""Exports of a run into the formats of the tools people already read results with.

Each on-disk format is one pydantic model of the subset we fill (we write them ourselves, so the
workbench never imports those tools); tests/interop has the tools' own code read what we write.

- :mod:`.inspect_log`: Inspect AI eval logs (JSON), one per agent configuration x task, for `inspect view`.
- :mod:`.paperbench`: PaperBench graded task trees, one per trial, for PaperBench's grading tools.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import WorkbenchError
from ..paths import RunPaths, TrialPaths


def trial_dirs(path: Path) -> list[Path]:
    """The trials a user named: a trial directory itself, or every trial of a run directory."""
    path = Path(path)
    if not path.is_dir():
        raise WorkbenchError(f"{path}: no such directory (a run directory or a trial directory)")
    if TrialPaths(path).trial_json.is_file():
        return [path]
    run = RunPaths(path)
    found = run.trials.iterdir() if run.trials.is_dir() else ()
    trials = sorted(p for p in found if TrialPaths(p).trial_json.is_file())
    if not trials:
        raise WorkbenchError(f"{path}: neither a trial directory (trial.json) nor a run directory with trials/")
    return trials
