"""The refuse agent declines every task: documents how refusals and fallbacks are recorded.

PaperBenchX §4.1: a refusal stays in the configuration's refusal rate; when the configuration names a
fallback, the fallback's submission decides the task score; a refusal without one scores 0.
"""

from __future__ import annotations

from ..task import Task
from .base import AgentResult, BaseAgent, Budget, Trajectory
from .public_task import PublicTask
from .workspace import Workspace


class RefuseAgent(BaseAgent):
    name = "refuse"
    options_known = frozenset({"message"})

    def run(self, view: PublicTask, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        message = self.options.get("message", "I can't help with this task.")
        trajectory.record("assistant", message)
        return AgentResult(status="refused", message=message)
