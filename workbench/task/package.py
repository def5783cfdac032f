"""A task package on disk: loading it, checking it, and hashing its contents."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..errors import WorkbenchError, load_toml_model
from ..io import digest_of, tree_hashes
from ..paths import TaskPaths
from ..rubric import Rubric, load_rubric
from ..rubric.tree import parse_rubric
from .model import TaskConfig

log = logging.getLogger(__name__)


@dataclass
class Task:
    """A loaded task package (:func:`load_task` makes one). ``id`` is the directory name.

    Args:
        paths: where the package's parts are.
        config: its task.toml, parsed.
    """

    paths: TaskPaths
    config: TaskConfig

    @property
    def id(self) -> str:
        return self.paths.root.name

    @property
    def root(self) -> Path:
        return self.paths.root

    @property
    def scoring(self) -> str:
        return self.config.metadata.scoring

    @cached_property
    def rubric(self) -> Rubric:
        """The rubric scored for this task: tests/rubric.json, or for ``qa`` tasks one leaf per question,
        for ``sota`` tasks without a rubric.json one leaf per evaluation instance, for ``discovery`` tasks a
        validity gate and the progress towards the published record."""
        if self.scoring == "qa":
            from .questions import synthesized_rubric

            return parse_rubric(synthesized_rubric(self.questions, self.id), str(self.paths.questions))
        if self.scoring == "discovery":
            from .discovery_spec import synthesized_rubric as discovery_rubric

            return parse_rubric(discovery_rubric(self.discovery_spec, self.id), str(self.paths.discovery))
        if self.scoring == "sota" and not self.paths.rubric.is_file():
            from .sota_spec import synthesized_rubric

            return parse_rubric(synthesized_rubric(self.sota_spec, self.id), str(self.paths.sota))
        return load_rubric(self.paths.rubric)

    @cached_property
    def questions(self):
        """tests/questions.json of a ``qa`` task (task.questions.Questions)."""
        from .questions import load_questions

        return load_questions(self.paths.questions)

    @cached_property
    def sota_spec(self):
        """tests/sota.json of a ``sota`` task (task.sota_spec.SotaSpec)."""
        from .sota_spec import load_spec

        return load_spec(self.paths.sota)

    @cached_property
    def discovery_spec(self):
        """tests/discovery.json of a ``discovery`` task (task.discovery_spec.DiscoverySpec)."""
        from .discovery_spec import load_discovery

        return load_discovery(self.paths.discovery)

    def scoring_inputs(self) -> dict[str, str]:
        """{path: sha256} of every private file that can change a score: all of tests/ (rubric, checks.py,
        refs/, judge.md, questions.json, sota.json, evaluator.py, ...) except construction records, in
        every scoring mode. A scoring's fingerprint covers them, so none can change unnoticed."""
        from .construction import RECORD_FILES

        if not self.paths.tests.is_dir():
            return {}
        return {f"tests/{k}": v for k, v in tree_hashes(self.paths.tests).items()
                if f"tests/{k}" not in RECORD_FILES and "__pycache__" not in k.split("/")}

    def file_hashes(self) -> dict[str, str]:
        """Every file of the package (public and private) except construction records and caches."""
        from .construction import RECORD_FILES

        return {k: v for k, v in tree_hashes(self.root).items()
                if k not in RECORD_FILES and "__pycache__" not in k.split("/")}

    def content_hash(self) -> str:
        """Digest of the package's files: the lock a run records (construction records excluded)."""
        return digest_of(self.file_hashes())


def load_config(path: Path) -> TaskConfig:
    return load_toml_model(path, TaskConfig)


def load_task(root: Path | str) -> Task:
    """The task package in ``root``, its task.toml read and checked (the rubric and the rest are read when
    first used).

    Args:
        root: the task directory (holding task.toml).

    Returns:
        The :class:`Task`.

    Raises:
        WorkbenchError: ``root`` is not a directory.
        ValidationProblem: task.toml is missing or invalid (each problem named with its file and field).
    """
    root = Path(root)
    if not root.is_dir():
        raise WorkbenchError(f"{root}: not a task directory")
    paths = TaskPaths(root.resolve())
    return Task(paths, load_config(paths.task_toml))


def find_tasks(directory: Path | str) -> list[Path]:
    """Task directories (those holding a task.toml) directly under ``directory``, or itself."""
    directory = Path(directory)
    if (directory / "task.toml").is_file():
        return [directory]
    if not directory.is_dir():
        raise WorkbenchError(f"{directory}: not a directory")
    return sorted(p for p in directory.iterdir() if (p / "task.toml").is_file())
