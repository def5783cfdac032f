"""The nop agent changes nothing: the starter submission is delivered as is (it should score 0)."""

from __future__ import annotations

from ..task import Task
from .base import AgentResult, BaseAgent, Budget, Trajectory
from .public_task import PublicTask
from .workspace import Workspace


class NopAgent(BaseAgent):
    name = "nop"
    privileged = False

    def run(self, view: PublicTask, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        trajectory.record("agent", "did nothing")
        return AgentResult(status="completed", message="no changes")
