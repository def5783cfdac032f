"""A person as the agent (``--agent human``): a shell in the same session sandbox a model's agent gets.

The person sees what an agent sees (the public task at /home/task, the working copy at /home/submission, the
task's environment on PATH, the scoring service where the task offers one as ``$WORKBENCH_SCORING_URL``),
under the same limits: the session's sandbox, network policy, memory and CPUs, and its time budget, shown in
the prompt, with the deadline warning at the prompt once the agents' warning time is reached. ``finish`` (or
``exit``) ends the session; the end of the budget ends it too. The clock starts when the person attaches
(``workbench attach``, or ``workbench run --agent human``, which attaches the terminal it runs in); a session
nobody attaches to within its budget ends as a timeout.

The record: session/terminal.cast (asciinema v2), and a trajectory whose steps are the commands typed, each
with its exit code and output (``kind: human_command``), so the ATIF export and the view read it as any other
trajectory. Usage is time only. Then the trial goes on exactly as a model's does: the clean replay and the
scoring know nothing of who the agent was.

What the shell cannot give a person exactly as an agent has it: the deadline is fixed when the shell starts
(time the scoring service spends on an official evaluation, which stops an agent's clock, is not given back),
and the terminal's size is the attaching terminal's at the start.
"""

from __future__ import annotations

import logging
import os
import select
import tempfile
import threading
import time
from pathlib import Path

from ..io import remove_tree
from ..paths import TrialPaths
from ..sandbox import Limits
from ..task import Task
from .base import AgentResult, BaseAgent, Budget, Trajectory, Usage
from .public_task import OBSERVATION_LIMIT, PublicTask
from .terminal import Cast, Commands, Door
from .workspace import HOME, TASK_HOME, Workspace

log = logging.getLogger(__name__)
RCFILE = "/tmp/.workbench-rc"
# the person's shell: the prompt shows the time left and prints, after each command, a marker with its
# exit code and text (history number changes only when a command was entered: an empty line is no step)
RC = r"""
HISTFILE=/tmp/.workbench-history; HISTCONTROL=; HISTTIMEFORMAT=
__wb_left() {
  local s=$(( WORKBENCH_DEADLINE - $(date +%s) )); (( s < 0 )) && s=0; printf '%dm%02ds' $((s/60)) $((s%60))
}
__wb_prompt() {
  local rc=$? line n cmd
  line=$(history 1); n=${line%%[^ 0-9]*}; n=${n// /}; cmd=${line#*[0-9]  }
  if [[ -n $n && $n != "$__wb_n" && -n $__wb_n_set ]]; then
    printf '\033]7770;%s;%s\a' "$rc" "$(printf %s "$cmd" | base64 -w0)"
  fi
  __wb_n=$n; __wb_n_set=1
  if [[ -z $__wb_warned ]] && (( $(date +%s) >= WORKBENCH_WARN_AT )); then
    __wb_warned=1; printf '\n[workbench] %s left: run `finish` once your submission is ready\n' "$(__wb_left)"
  fi
}
PROMPT_COMMAND=__wb_prompt
PS1='[\[\e[1m\]$(__wb_left)\[\e[0m\] left] \w \$ '
finish() {
  printf '[workbench] session finished: your submission is replayed and scored as an agent'"'"'s is\n'; exit 0
}
cd __HOME__
cat <<'EOF'
[workbench] You are the agent. The task: __TASK_HOME__/instruction.md (paper: __TASK_HOME__/paper/).
[workbench] Your working copy: __HOME__ (deliver reproduce.sh there). Type `finish` when done.
EOF
if [[ -n $WORKBENCH_SCORING_URL ]]; then  # the hidden scoring service: what an agent's submit_for_score does
  score() {
    python3 -c 'import json, os, sys, urllib.request as u
e = os.environ
r = u.Request(e["WORKBENCH_SCORING_URL"] + "/evaluate",
              data=json.dumps({"description": " ".join(sys.argv[1:])}).encode(),
              headers={"Authorization": "Bearer " + e["WORKBENCH_SCORING_TOKEN"],
                       "Content-Type": "application/json"})
print(json.dumps(json.load(u.urlopen(r, timeout=3600)), indent=1))' "$@"
  }
  echo '[workbench] `score "what you changed"` submits your working copy to the hidden scoring service.'
fi
"""
# writes the rcfile into the call's own /tmp, then the shell, on a pty of its own (the sandbox gives none)
LAUNCH = ('printf %s "$1" > ' + RCFILE + '; export WORKBENCH_DEADLINE=$2 WORKBENCH_WARN_AT=$3 TERM=xterm-256color; '
          'stty rows "$5" cols "$4" 2>/dev/null; '
          'exec script -qfec "stty rows $5 cols $4; exec bash --noprofile --rcfile ' + RCFILE + ' -i" /dev/null')


class HumanAgent(BaseAgent):
    """A person at a terminal (their own, or the view's in a browser) is the agent."""

    name = "human"
    options_known = frozenset({"person"})  # who (a class's student), shown in reports

    def run(self, view: PublicTask, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        tp = TrialPaths(trajectory.path.parent.parent)
        person = self.options.get("person")
        keys_r, keys_w = os.pipe()
        door = Door(keys_w, tp.terminal_door, {"task": view.task_id, "person": person,
                                               "budget_sec": budget.wall_sec})
        log.info("a person's session waits: workbench attach %s", tp.root)
        waited = time.monotonic()
        try:
            if not door.attached.wait(budget.wall_sec):
                return AgentResult("timeout", f"no one attached within the session's {budget.wall_sec:g} s",
                                   details={"person": {"name": person, "waited_sec": round(budget.wall_sec, 3)}})
            budget.started = time.monotonic()  # the person's clock starts now
            return self._session(view, workspace, budget, trajectory, tp, door, keys_r, person,
                                 round(budget.started - waited, 3))
        finally:
            door.close(b"\r\n[workbench] the session is over; the submission goes to the clean replay\r\n")
            os.close(keys_r)
            os.close(keys_w)

    def _session(self, view, workspace, budget, trajectory, tp, door, keys_r, person, waited) -> AgentResult:
        log_cap = Limits(timeout_sec=1, memory_mb=1, cpus=1).max_log_mb << 20  # a session log's bound, as for agents
        steps = _Steps(trajectory, log_cap)
        commands = Commands(steps.record)
        cast = Cast(tp.terminal_cast, door.size, f"{view.task_id}: {person or door.name or 'a person'}", log_cap)
        fifo_dir = Path(tempfile.mkdtemp(prefix="workbench-shell-"))
        fifo = fifo_dir / "out"
        os.mkfifo(fifo, 0o600)
        out = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # never EOF while we hold it: stop by ``done``
        done = threading.Event()

        def relay() -> None:
            while True:
                ready, _, _ = select.select([out], [], [], 0.2)
                if not ready:
                    if done.is_set():
                        return
                    continue
                try:
                    data = os.read(out, 1 << 16)
                except BlockingIOError:
                    continue
                shown = commands.feed(data)
                if shown:
                    cast.output(shown)
                    door.send(shown)

        reader = threading.Thread(target=relay, daemon=True, name="human-shell-output")
        reader.start()
        left = budget.remaining()
        deadline = int(time.time() + left)
        rc = RC.replace("__HOME__", HOME).replace("__TASK_HOME__", TASK_HOME)
        cols, rows = door.size
        try:
            result = workspace.attach(["bash", "-c", LAUNCH, "workbench-human", rc, str(deadline),
                                       str(int(deadline - budget.warn_at())), str(cols), str(rows)],
                                      left, keys_r, fifo)
        finally:
            done.set()
            reader.join(5)
            os.close(out)
            cast.close()
            remove_tree(fifo_dir)
        details = {"person": {"name": person or door.name, "commands": steps.count, "waited_sec": waited,
                              "cast_bytes": tp.terminal_cast.stat().st_size, "cast_capped": cast.capped}}
        if result.timed_out:
            return AgentResult("timeout", f"the session's time ran out after {steps.count} commands",
                               usage=Usage(), details=details)
        message = f"the person ended the session after {steps.count} commands (exit code {result.exit_code})"
        return AgentResult("completed", message, usage=Usage(), details=details)


MAX_STEPS = 10_000  # commands recorded as steps; the rest are counted (the markers are the shell's to print)


class _Steps:
    """Each command typed becomes a trajectory step: the command as a shell call, its output as the observation
    (truncated by :class:`~workbench.agents.base.Trajectory`, as every observation is).

    At most :data:`MAX_STEPS` steps and ``max_bytes`` of them: the markers are the shell's to print, as fast
    as it likes and each naming a command of up to 64 KB (recorded twice: the message and the call), and every
    step is a record written on the host. The rest are counted, not recorded."""

    def __init__(self, trajectory: Trajectory, max_bytes: int):
        self.trajectory = trajectory
        self.max_bytes = max_bytes
        self.count = 0
        self.bytes = 0  # what the recorded steps hold (the command twice, the observation as truncated)
        self.full = False

    def record(self, command: str, code: int, output: str) -> None:
        self.count += 1
        if self.full:
            return
        at = output.find(command)  # the prompt and the command's echo come first: the output is what follows
        output = output[at + len(command):].lstrip("\n") if at >= 0 else output
        content = f"{output}\n[exit code {code}]"
        size = 2 * len(command) + min(len(content), OBSERVATION_LIMIT + 64)
        if self.count > MAX_STEPS or self.bytes + size > self.max_bytes:
            self.full = True
            self.trajectory.record("system", f"[workbench: more than {MAX_STEPS} commands or "
                                             f"{self.max_bytes >> 20} MB of them; the rest are counted in "
                                             "usage.json, not recorded as steps]")
            return
        self.bytes += size
        call = f"h{self.count}"
        self.trajectory.record("assistant", command, kind="human_command",
                               tool_calls=[{"id": call, "name": "bash", "arguments": {"command": command}}],
                               observations=[{"tool_call_id": call, "content": content}])
