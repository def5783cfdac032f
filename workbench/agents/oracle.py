"""The oracle agent delivers the task's private reference solution: a perfect delivery, for sanity."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import WorkbenchError
from ..task import Task
from .base import AgentResult, BaseAgent, Budget, TaskView, Trajectory


class OracleAgent(BaseAgent):
    name = "oracle"
    privileged = True

    def run(self, view: TaskView, workdir: Path, budget: Budget, trajectory: Trajectory,
            task: Task | None = None) -> AgentResult:
        if task is None or not task.paths.solution.is_dir():
            raise WorkbenchError(f"task {view.task_id} has no solution/ for the oracle agent")
        for child in list(workdir.iterdir()):
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        shutil.copytree(task.paths.solution, workdir, dirs_exist_ok=True, symlinks=True)
        trajectory.record("agent", "copied the reference solution into the submission",
                          tool_calls=[{"name": "copy_solution"}])
        return AgentResult(status="completed", message="reference solution delivered", turns=trajectory.turns)
