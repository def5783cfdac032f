"""What a trial's page says while a trial is not finished: the live tail of the running stage's log, and
the command that resumes an interrupted trial.

The logs are what the submission or the agent printed (untrusted text, escaped on its way in), read from
their last :data:`TAIL_BYTES` only, without following a link, so a page refreshing every few seconds costs
the host a few kilobytes whatever the log's size.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

from ..batch.run_spec import read_run_spec
from ..paths import RunPaths, TrialPaths
from ..trial.record import TrialRecord
from .frame import e

TAIL_BYTES = 8192
TAIL_LINES = 40


def tail(path: Path, max_bytes: int = TAIL_BYTES) -> str | None:
    """The last :data:`TAIL_LINES` whole lines of the file's last ``max_bytes``, without following a link;
    None where it is not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        os.lseek(fd, max(0, st.st_size - max_bytes), os.SEEK_SET)
        text = os.read(fd, max_bytes).decode("utf-8", "replace")
    finally:
        os.close(fd)
    lines = text.splitlines()
    return "\n".join(lines[-TAIL_LINES:] if st.st_size <= max_bytes else lines[1:][-TAIL_LINES:])


def stage_logs(tp: TrialPaths, stage: str | None) -> list[tuple[str, Path]]:
    """The logs a running stage writes as it goes: (what, path)."""
    if stage == "session":
        return [("agent log", tp.agent_log), ("trajectory (last steps)", tp.trajectory)]
    if stage == "replay":
        return [("replay stdout", tp.stdout_log), ("replay stderr", tp.stderr_log)]
    return []


def log_tail(tp: TrialPaths, stage: str | None) -> str:
    """The running stage's logs, their last lines each (empty when the stage writes none yet)."""
    parts = []
    for what, path in stage_logs(tp, stage):
        text = tail(path)
        if text:
            parts.append(f"<div class='log-tail' data-log='{e(path.name)}'><b>{e(what)}</b> "
                         f"<span class='muted'>(last lines, live)</span><pre>{e(text)}</pre></div>")
    return "".join(parts)


def resume_command(run: RunPaths, rec: TrialRecord) -> str:
    """The command that runs an interrupted trial again: the batch's ``--resume``, or the same ``workbench run``."""
    spec = read_run_spec(run)
    if spec is not None and spec.matrix:
        return f"workbench batch MATRIX.toml --out {shlex.quote(str(run.root))} --resume  (the batch's matrix file)"
    c = rec.config
    words = ["workbench", "run", rec.task_dir or "TASK_DIR", "--agent", c.agent]
    if c.name != c.agent:
        words += ["--name", c.name]
    if c.model:
        words += ["--model", c.model]
    words += ["--out", str(run.root), "--attempt", str(rec.attempt)]
    extra = "  (with the configuration's options, -o KEY=VALUE)" if c.options else ""
    return " ".join(shlex.quote(w) for w in words) + extra
