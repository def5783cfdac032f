"""The ``replay`` agent: re-applies a recorded submission or trajectory (demos, teaching, tests).

``options.submission`` copies a recorded package into the working copy; ``options.trajectory``
re-executes the ``bash`` and ``write_file`` calls of a recorded trajectory.jsonl, in order, in the
session sandbox (so the replayed session is subject to the same isolation as the original).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..io import copy_tree
from ..task import Task
from .base import AgentResult, AgentStartError, BaseAgent, Budget, Trajectory
from .public_task import PublicTask
from .workspace import Workspace


class ReplayAgent(BaseAgent):
    name = "replay"
    options_known = frozenset({"submission", "trajectory"})

    @classmethod
    def check_config(cls, model, options) -> None:
        super().check_config(model, options)
        if not options.get("submission") and not options.get("trajectory"):
            raise ValueError("the replay agent needs -o submission=DIR or -o trajectory=FILE")

    def run(self, view: PublicTask, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        if self.options.get("submission"):
            src = Path(self.options["submission"])
            if not src.is_dir():
                raise AgentStartError(f"the replay agent's recorded submission {src} is not a directory")
            copy_tree(src, workspace.work, dirs_exist_ok=True)
            trajectory.record("agent", f"re-applied the recorded submission {src}", tool_calls=[
                {"id": "replay-1", "name": "copy_submission", "arguments": json.dumps({"source": str(src)})}])
            return AgentResult("completed", "recorded submission re-applied")
        if self.options.get("trajectory"):
            return self._trajectory(Path(self.options["trajectory"]), workspace, budget, trajectory)
        raise AgentStartError("the replay agent needs options.submission or options.trajectory")

    def _trajectory(self, path: Path, ws: Workspace, budget: Budget, trajectory: Trajectory) -> AgentResult:
        if not path.is_file():
            raise AgentStartError(f"the replay agent's recorded trajectory {path} is not a file")
        n = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            calls, observations = [], []
            for call in rec.get("tool_calls") or []:
                if budget.remaining() <= 0:
                    return AgentResult("timeout", f"the budget ran out after {n} replayed calls")
                try:
                    args = json.loads(call.get("arguments") or "{}")
                except json.JSONDecodeError:
                    continue
                if call["name"] == "bash":
                    res = ws.run(str(args.get("command", "")), budget.remaining())
                elif call["name"] == "write_file":
                    res = ws.write_file(str(args.get("path", "")), str(args.get("content", "")), budget.remaining())
                else:
                    continue
                n += 1
                calls.append(call)
                observations.append({"tool_call_id": call.get("id"), "content": f"exit code {res.exit_code}\n"
                                                                                f"{res.output}"})
            if calls:
                trajectory.record("agent", rec.get("message", ""), tool_calls=calls, observations=observations,
                                  replayed_turn=rec.get("turn"))
        return AgentResult("completed", f"replayed {n} tool calls from {path}")
