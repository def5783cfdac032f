"""The oracle agent delivers the task's private reference solution: a perfect delivery, for sanity."""

from __future__ import annotations

from ..errors import WorkbenchError
from ..io import copy_tree, remove_tree
from ..task import Task
from .base import AgentResult, BaseAgent, Budget, Trajectory
from .public_task import PublicTask
from .workspace import Workspace


class OracleAgent(BaseAgent):
    name = "oracle"
    privileged = True

    def run(self, view: PublicTask, workspace: Workspace, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        if task is None or not task.paths.solution.is_dir():
            raise WorkbenchError(f"task {view.task_id} has no solution/ for the oracle agent")
        workdir = workspace.work
        for child in list(workdir.iterdir()):
            remove_tree(child)
        copy_tree(task.paths.solution, workdir, dirs_exist_ok=True)
        trajectory.record("agent", "copied the reference solution into the submission",
                          tool_calls=[{"id": "oracle-1", "name": "copy_solution", "arguments": "{}"}])
        return AgentResult(status="completed", message="reference solution delivered")
