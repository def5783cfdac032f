"""Whether this host can give a task what it asks for: its cores, memory, storage and GPUs.

A task's ``[environment]`` is a requirement, not a wish (PaperBenchX's packages ask for 8 CPUs, 32 GB and
50 GB; NatureBench's for a GPU). Run on less, a reproduction would be timed, starved or killed by the host
rather than judged on its science, and a GPU task would silently compute on the CPU. So a host that lacks
any of them is refused in one line naming what is missing, before a session or a replay starts; on a
cluster the jobs ask the scheduler instead (:mod:`workbench.batch.executors.slurm`).
"""

from __future__ import annotations

import os
import shutil
import tempfile

from ..errors import WorkbenchError
from . import gpus


def memory_mb() -> int:
    """This host's physical memory."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20


def scratch_free_mb() -> int:
    """Free space where sandboxes' volumes are made (``WORKBENCH_SCRATCH``, else the temporary directory)."""
    return shutil.disk_usage(os.environ.get("WORKBENCH_SCRATCH") or tempfile.gettempdir()).free // 2**20


def missing(environment) -> list[str]:
    """What of ``environment`` (a task's ``[environment]``) this host cannot give, in words."""
    out = []
    cores = len(os.sched_getaffinity(0))
    if environment.cpus > cores:
        out.append(f"{environment.cpus} CPUs (this host gives {cores})")
    if environment.memory_mb > (have := memory_mb()):
        out.append(f"{environment.memory_mb} MB of memory (this host has {have})")
    if environment.storage_mb and environment.storage_mb > (free := scratch_free_mb()):
        out.append(f"{environment.storage_mb} MB of storage (this host has {free} free)")
    if environment.gpus:
        found, _ = gpus.inventory()
        if len(found) < environment.gpus:
            out.append(f"{environment.gpus} GPU(s) (this host has {len(found) or 'none'}"
                       + ("" if found else f": no {gpus.dev_dir()}/nvidia0") + ")")
    return out


def require(task) -> None:
    """Refuse ``task`` in one line, before any work, on a host without what its ``[environment]`` asks for."""
    lacking = missing(task.config.environment)
    if lacking:
        raise WorkbenchError(f"task {task.id} needs {'; '.join(lacking)}: refused before any work (run it on a "
                             "host that has them, or through --executor slurm; a GPU task never runs on the CPU)")
