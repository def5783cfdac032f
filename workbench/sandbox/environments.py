"""Task environments on the host: installed once by the task's ``environment/install.sh``.

The local sandbox cannot build the task's Docker image, so each task ships ``install.sh`` that
installs the same pinned environment on a Debian host into ``$WORKBENCH_ENV`` (usually a venv built
from Debian's /usr/bin/python3). install.sh may read anything beside it (requirements and constraints
files, lock files, data), so an environment is keyed by the content of every file of ``environment/``
except the paper, the starter submission and the Dockerfile: changing a pin gives a new environment
instead of silently reusing the old one, and a copied or renamed task with the same files finds the
one already installed. The directory is named by that digest only (``env-<digest16>``); its marker
file records which task installed it. The replay mounts it read-only at the same path and puts its
``bin/`` first on PATH; its digest goes into the replay provenance.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import platform
import shutil
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ..errors import WorkbenchError
from ..io import atomic_write_json, digest_of, sha256_bytes, tree_hashes
from ..task import Task

log = logging.getLogger(__name__)

MARKER = ".workbench-env.json"


def envs_root() -> Path:
    """Where environments live. Outside any home directory so the sandbox user can read them."""
    if "WORKBENCH_ENVS" in os.environ:
        return Path(os.environ["WORKBENCH_ENVS"])
    if os.geteuid() == 0:
        return Path("/opt/workbench/envs")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "workbench" / "envs"


NOT_ENVIRONMENT = ("paper", "starter_submission", "Dockerfile")  # top-level entries install.sh has no use for


def env_files(task: Task) -> dict[str, str]:
    """{path in environment/: sha256} of every file that defines the task's host environment."""
    return tree_hashes(task.paths.environment, exclude_top=NOT_ENVIRONMENT)


def env_dir(task: Task) -> Path | None:
    """The environment directory for a task, or None when it has no install.sh (host /usr only)."""
    if not task.paths.install_sh.is_file():
        return None
    return envs_root() / f"env-{digest_of(env_files(task))[:16]}"


def env_info(task: Task) -> dict:
    """What the replay records about the environment; errors if it is not installed."""
    d = env_dir(task)
    if d is None:
        host = {"python": platform.python_version(), "platform": platform.platform()}
        return {"dir": None, "kind": "host", "digest": sha256_bytes(json.dumps(host, sort_keys=True).encode())}
    marker = d / MARKER
    if not marker.is_file():
        raise WorkbenchError(
            f"the environment of task {task.id} is not installed ({d}); run: workbench env install {task.root}"
        )
    info = json.loads(marker.read_text())
    pinned = {"files_digest": info.get("files_digest"), "packages": info.get("packages")}
    return {"dir": str(d), "kind": "install.sh",
            "digest": sha256_bytes(json.dumps(pinned, sort_keys=True).encode()), **info}


def install_env(task: Task, *, force: bool = False, say: Callable[[str], None] | None = None) -> Path | None:
    """Run install.sh into the task's environment directory; idempotent unless force. Tasks with the same
    environment files share the directory, so installs of it take turns (a lock beside it). ``say`` hears
    when a real install starts and ends (install.sh's own output streams to the terminal between)."""
    d = env_dir(task)
    if d is None:
        log.info("task %s has no environment/install.sh: it uses the host's /usr", task.id)
        return None
    d.parent.mkdir(parents=True, exist_ok=True)
    with open(d.with_name(d.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (d / MARKER).is_file() and not force:
            log.info("environment of %s already installed at %s", task.id, d)
            return d
        if say:
            say(f"installing the environment of {task.id} into {d} (install.sh's output follows; minutes the "
                "first time)")
        t0 = time.monotonic()
        _install(task, d)
        if say:
            say(f"environment of {task.id} installed in {time.monotonic() - t0:.0f} s")
    return d


def _install(task: Task, d: Path) -> None:
    files = env_files(task)
    if d.exists():
        shutil.rmtree(d)
    env = {**os.environ, "WORKBENCH_ENV": str(d)}
    log.info("installing the environment of %s into %s", task.id, d)
    start = time.monotonic()
    proc = subprocess.run(["bash", str(task.paths.install_sh)], cwd=task.paths.environment, env=env)
    if proc.returncode != 0:
        raise WorkbenchError(f"{task.paths.install_sh} failed with exit code {proc.returncode}")
    freeze = None
    py = d / "bin" / "python"
    if py.exists():
        out = subprocess.run([str(py), "-m", "pip", "freeze", "--all"], capture_output=True, text=True)
        freeze = sorted(out.stdout.split()) if out.returncode == 0 else None
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o755)
    atomic_write_json(d / MARKER, {
        "installed_by": {"task": task.id, "root": str(task.root)},
        "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "files_digest": digest_of(files),
        "files": files,
        "packages": freeze,
        "install_seconds": round(time.monotonic() - start, 1),
    })


def install_image(task: Task, *, ca_bundle: Path | None = None,
                  say: Callable[[str], None] | None = None) -> tuple[str, str]:
    """(tag, image id) of the task's docker image: reused when the engine has it (the tag is the digest of
    environment/), else built, the base image first when it is missing."""
    from .docker.image import connect, task_image

    client = connect()
    tag = task_image(task, client, ca_bundle=ca_bundle, say=say)
    return tag, client.images.get(tag).id


def environment_for(task: Task, backend: str, client=None) -> tuple[dict, str | None]:
    """(env info, image) a sandbox backend runs ``task`` in: the installed environment directory for
    bwrap (errors early if it is not installed), the task's image for docker (built on first use)."""
    if backend == "docker":
        from .docker.image import connect, task_image

        client = client or connect()
        image = task_image(task, client)
        # the digest is the image's own id (its content), not the tag naming the build context
        return {"dir": None, "kind": "docker", "digest": client.images.get(image).id, "image": image}, image
    return env_info(task), None
