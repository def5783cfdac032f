"""EurekAgent's discovery loop (its paper's §3): metric-driven research run by off-the-shelf agents.

The workbench owns only the outer loop, as EurekAgent does: one *prepare* session, then rounds of one
*propose* session and up to K parallel *implement* sessions, each a normal agent session (sandboxed,
recorded, with the task's hidden scoring service) in a workspace of its own. Between sessions the
controller ranks every valid submission into a history the next round reads, persists the run's state
so a killed run resumes without re-running a finished session, and enforces the budgets. At the end the
best submission is replayed cleanly and scored like any trial.

- :mod:`.records`: the run's state (``discovery.json``) and the ranked history (``history.json``), one
  model each.
- :mod:`.goals`: what each phase asks of its session.
- :mod:`.loop`: the controller (:func:`discover`).
- :mod:`.people`: a person in the loop: messages, answers to the preparation's questions, pause.
"""

from .loop import discover
from .people import send_message, set_paused

__all__ = ["discover", "send_message", "set_paused"]
