"""Task packages: the task.toml model, loading, and checking."""

from .model import TaskConfig
from .package import Task, find_tasks, load_config, load_task

__all__ = ["Task", "TaskConfig", "find_tasks", "load_config", "load_task"]
