"""What each phase of a discovery run asks of its session: the goal and the deliverables (EurekAgent §3.1).

The goal is prepended to the task's own instruction, so a session reads the problem statement, the
submission format and the goal in one file (/home/task/instruction.md). Its first line names the phase
(``PHASE: implement``) for agents that key on it, such as a scripted one.
"""

from __future__ import annotations

HYPOTHESES = "hypotheses.json"  # a propose session's deliverable, in its working copy
PREPARATION = "PREPARATION.md"  # the prepare session's deliverable, in its working copy
HYPOTHESIS = "HYPOTHESIS.md"  # an implement session's direction, written into its workspace
QUESTIONS = "QUESTIONS.md"  # the prepare session's questions for a person (optional; the run waits for an answer)
ANSWERS = "ANSWERS.md"  # the person's answer, in every later session's context

_COMMON = """The scoring service (the `submit_for_score` tool, or POST $WORKBENCH_SCORING_URL/evaluate with the
bearer token $WORKBENCH_SCORING_TOKEN) replays your working copy and returns the official metric, its
validity and a message from a hidden evaluator you cannot read. /home/task/context/ (read-only) holds the
run's ranked history (history.md, history.json) and earlier rounds' workspaces."""


def prepare_goal() -> str:
    return f"""PHASE: prepare

You prepare a metric-driven research run on the problem below. Read the problem and the initial code in
your working copy, test the scoring service once with the initial code, check that the environment has
what solutions will need, and write {PREPARATION} in your working copy: what the problem asks, how it is
scored, what the initial code scores, and anything unclear. Do not optimise yet. If something essential
is unclear, also write your questions to {QUESTIONS}: the run waits for a person's answer, which every
later session reads in /home/task/context/{ANSWERS}.

{_COMMON}
"""


def propose_goal(round_: int, parallel: int) -> str:
    return f"""PHASE: propose (round {round_})

Propose at most {parallel} diverse, independently implementable hypotheses for improving the best solution
so far (read /home/task/context/: the preparation summary, the ranked history and earlier workspaces).
Write them to {HYPOTHESES} in your working copy as a JSON list of objects with "title" and "description"
(what to implement and why it may score better). Do not implement them.

{_COMMON}
"""


def implement_goal(round_: int, title: str, description: str) -> str:
    return f"""PHASE: implement (round {round_})

Your hypothesis: {title}
{description}

Your working copy is a git repository starting from the best solution so far (or the initial code). Work
from the hypothesis, submit candidates to the scoring service as often as useful, and commit each version
with a message that says what the solution is and what changed from the previous one. What counts is the
best valid submission the scoring service recorded; `bash reproduce.sh` must regenerate it.

{_COMMON}
"""


def continue_goal(goal: str, seconds: float) -> str:
    """A session continued by --extend: the same goal, told that its working copy is where it stopped."""
    phase, _, rest = goal.partition("\n")
    return (f"{phase}\n\nCONTINUED: the previous session on this goal ran out of time before its deliverable. Your "
            f"working copy is where it stopped; you have {seconds / 60:.0f} more minutes.\n{rest}")
