"""A person in the loop of a discovery run (EurekAgent §3.2): messages to running sessions, answers to the
prepare session's questions, and pausing.

Each is a file the person's command writes and the controller (or the session's agent) reads, so it works
whether the controller runs in another process or is not running at all: an answer given to a killed run
is picked up when it resumes.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from ..errors import WorkbenchError
from ..io import atomic_write_text
from ..paths import TrialPaths
from .records import DiscoveryState, read_state

PAUSE = "PAUSE"  # RUN/PAUSE: while it exists no new session starts (workbench discover-pause)
ANSWER = "answer.txt"  # RUN/answer.txt: a person's answer to the prepare session's questions
MAX_MESSAGE_CHARS = 4000


def _state(out: Path) -> DiscoveryState:
    if not (out / "discovery.json").is_file():
        raise WorkbenchError(f"{out}: no discovery run here (no discovery.json)")
    return read_state(out)


def send_message(out: Path | str, session_id: str, text: str) -> Path:
    """A person's message to a session of a discovery run; returns the file it went to.

    To a running session it reaches the agent on its next turn and is recorded in the trajectory (the openai
    agent). To ``prepare`` while the run waits on its questions it is the answer every later session reads.

    Args:
        out: the run directory.
        session_id: ``prepare``, ``r1-propose``, ``r1-i2``, ...
        text: the message (its first 4,000 characters).

    Raises:
        WorkbenchError: (one line) no such run or session, the session is not running, or its agent cannot
            take messages (a CLI agent runs one command and reads none).
    """
    out = Path(out)
    state = _state(out)
    rec = state.session(session_id)
    if rec is None:
        raise WorkbenchError(f"{out}: no session {session_id!r}; there is: {', '.join(s.id for s in state.sessions)}")
    if rec.phase == "prepare" and state.question is not None and state.answer is None:
        atomic_write_text(out / ANSWER, text[:MAX_MESSAGE_CHARS])  # the waiting controller picks it up
        return out / ANSWER
    if rec.status != "running":
        raise WorkbenchError(f"session {session_id} is {rec.status}, not running; a message reaches a running session")
    agent = state.propose_agent if rec.phase == "propose" else state.agent
    if agent.agent != "openai":
        raise WorkbenchError(f"session {session_id} runs the {agent.agent} agent, which reads no messages while it "
                             "runs (the openai agent reads them on its next turn)")
    inbox = TrialPaths(out / "sessions" / session_id).inbox
    with open(inbox, "a", encoding="utf-8") as fh:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        fh.write(json.dumps({"at": at, "text": text[:MAX_MESSAGE_CHARS]}) + "\n")
    return inbox


def set_paused(out: Path | str, paused: bool = True) -> bool:
    """Pause a discovery run (sessions running finish, no new one starts) or end its pause; returns whether it
    was paused before. A run need not be running: a paused run that is resumed waits at its first session."""
    out = Path(out)
    _state(out)
    flag = out / PAUSE
    was = flag.exists()
    if paused:
        flag.write_text("paused by a person\n", encoding="utf-8")
    elif was:
        flag.unlink()
    return was

