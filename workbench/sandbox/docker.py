"""The ``docker`` sandbox: the same guarantees as ``bwrap`` through a Docker engine (docker SDK).

Each command runs in a fresh container of the task's image (built from ``environment/Dockerfile`` by
:func:`task_image`): no network (``network_mode="none"``), every capability dropped,
``no-new-privileges``, a read-only root filesystem with size-bounded tmpfs ``/tmp`` and ``/dev/shm``,
user 1000:1000, limits on memory (no swap), CPUs, processes, open files and file size, the submission
bind-mounted read-write and everything else the caller mounts read-only. The wall clock, the storage
and file-count watchdog and the capped logs are the same code as for bwrap (:mod:`.watch`); the
container is killed and removed whatever happens.

The machines this project is developed on have no Docker engine; the tests of this backend are marked
``docker`` and run where one exists (see SECURITY.md).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path

from ..errors import WorkbenchError
from ..io import digest_of, tree_hashes
from .base import Limits, SandboxResult, SandboxSetupError, SandboxSpec, chown_tree
from .watch import MB, DiskWatch, write_capped

log = logging.getLogger(__name__)
INNER_UID = 1000
POLL_SEC = 0.2
STDIN_PATH = "/run/workbench-stdin"


def _client():
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - docker is a dependency
        raise WorkbenchError("the docker sandbox needs the docker SDK (pip install docker)") from exc
    try:
        return docker.from_env()
    except docker.errors.DockerException as exc:
        raise SandboxSetupError(f"docker sandbox: no Docker engine reachable ({exc})") from None


def build_context(task_root: Path) -> dict[str, str]:
    """{path: sha256} of the build context the engine gets from ``environment/``: every file the docker SDK
    sends (all but what ``.dockerignore`` excludes), since any of them may be COPY'd into the image (PaperBenchX
    images copy the paper and the starter submission)."""
    from docker.utils.build import exclude_paths

    env = Path(task_root) / "environment"
    ignore = env / ".dockerignore"
    lines = [x.strip() for x in ignore.read_text(encoding="utf-8").splitlines()] if ignore.is_file() else []
    sent = exclude_paths(str(env), [x for x in lines if x and not x.startswith("#")], dockerfile="Dockerfile")
    return {k: v for k, v in tree_hashes(env).items() if k in sent}


def image_tag(task_root: Path) -> str:
    """``workbench/env:<digest16 of the build context>``: a changed file gives a new image, and a copied or
    renamed task with the same context uses the one already built (its ``workbench.task`` label says who built
    it)."""
    return f"workbench/env:{digest_of(build_context(task_root))[:16]}"


def task_image(task, client=None) -> str:
    """The task's image, built from environment/Dockerfile when the engine does not have it yet."""
    client = client or _client()
    tag = image_tag(task.root)
    try:
        client.images.get(tag)
    except Exception:
        if not task.paths.dockerfile.is_file():
            raise WorkbenchError(f"{task.paths.dockerfile}: missing; the docker sandbox cannot build {task.id}"
                                 ) from None
        log.info("building %s from %s", tag, task.paths.dockerfile)
        client.images.build(path=str(task.paths.environment), tag=tag, rm=True, labels={"workbench.task": task.id})
    return tag


def container_options(spec: SandboxSpec, image: str) -> dict:
    """The keyword arguments of ``containers.create``: every isolation setting in one place."""
    from docker.types import Ulimit

    lim: Limits = spec.limits
    tmp_mb = lim.tmp_mb
    return dict(
        image=image, working_dir=spec.workdir, environment=dict(spec.env), user=f"{INNER_UID}:{INNER_UID}",
        network_mode="none" if spec.network == "none" else "host",
        cap_drop=["ALL"], security_opt=["no-new-privileges"], read_only=True, privileged=False,
        tmpfs={"/tmp": f"size={tmp_mb}m,mode=1777", "/dev/shm": f"size={max(1, tmp_mb // 4)}m,mode=1777"},
        mem_limit=f"{lim.memory_mb}m", memswap_limit=f"{lim.memory_mb}m", nano_cpus=int(lim.cpus * 1e9),
        pids_limit=lim.max_processes,
        ulimits=[Ulimit(name="nofile", soft=lim.max_open_files, hard=lim.max_open_files),
                 Ulimit(name="fsize", soft=lim.max_file_mb * MB, hard=lim.max_file_mb * MB),
                 Ulimit(name="core", soft=0, hard=0)],
        volumes={str(m.source): {"bind": m.target, "mode": "rw" if m.writable else "ro"} for m in spec.mounts},
        detach=True, stdin_open=False, tty=False, init=True,
    )


class DockerSandbox:
    name = "docker"

    def __init__(self, client=None):
        self._client = client

    @property
    def client(self):
        if self._client is None:
            self._client = _client()
        return self._client

    def available(self) -> tuple[bool, str]:
        try:
            self.client.ping()
            return True, ""
        except Exception as exc:
            return False, f"no Docker engine reachable ({type(exc).__name__}: {exc})"

    def describe(self) -> dict:
        v = self.client.version()
        return {"backend": self.name, "version": v.get("Version"), "api": v.get("ApiVersion"), "inner_uid": INNER_UID}

    def prepare(self, path: Path) -> None:
        """Hand a staging tree to the container user (uid 1000) so it can write its outputs."""
        if os.geteuid() == 0:
            chown_tree(path, INNER_UID)

    def run(self, argv: list[str], spec: SandboxSpec, stdout: Path, stderr: Path,
            stdin: bytes | None = None) -> SandboxResult:
        ok, why = self.available()
        if not ok:
            raise SandboxSetupError(f"docker sandbox unavailable: {why}")
        image = spec.image or "debian:bookworm-slim"
        opts = container_options(spec, image)
        stdin_dir = None
        if stdin is not None:  # handed over as a read-only file: no attach socket to manage
            stdin_dir = Path(tempfile.mkdtemp(prefix="workbench-stdin-"))
            (stdin_dir / "stdin").write_bytes(stdin)
            os.chmod(stdin_dir, 0o755)
            os.chmod(stdin_dir / "stdin", 0o644)
            opts["volumes"][str(stdin_dir / "stdin")] = {"bind": STDIN_PATH, "mode": "ro"}
            argv = ["sh", "-c", f'exec "$@" < {STDIN_PATH}', "workbench-stdin", *argv]
        lim = spec.limits
        watch = DiskWatch([m.source for m in spec.mounts if m.writable], lim.max_storage_mb, lim.max_files,
                          volumes=[m.volume for m in spec.mounts if m.writable and m.volume is not None])
        try:
            container = self.client.containers.create(command=argv, **opts)
        except Exception as exc:
            raise SandboxSetupError(f"docker sandbox: could not create the container: {exc}") from exc
        start = time.monotonic()
        timed_out, exceeded, oom = False, None, False
        dropped: dict[str, int] = {}
        try:
            container.start()
            deadline = start + lim.timeout_sec
            while True:
                container.reload()
                if container.status in ("exited", "dead"):
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                elif (exceeded := watch.check()) is None:
                    time.sleep(POLL_SEC)
                    continue
                container.kill()
                break
            rc = container.wait(timeout=30).get("StatusCode")
            container.reload()
            oom = bool(container.attrs.get("State", {}).get("OOMKilled"))
            for name, path, flags in (("stdout", stdout, {"stdout": True, "stderr": False}),
                                      ("stderr", stderr, {"stdout": False, "stderr": True})):
                dropped[name] = write_capped(container.logs(stream=True, **flags), Path(path), lim.max_log_mb * MB)
        finally:
            try:
                container.remove(force=True)
            except Exception as exc:  # pragma: no cover - best effort
                log.warning("could not remove container %s: %s", getattr(container, "id", "?"), exc)
            if stdin_dir is not None:
                for p in stdin_dir.iterdir():
                    p.unlink()
                stdin_dir.rmdir()
        wall = time.monotonic() - start
        killed = timed_out or exceeded is not None
        limit = ("storage" if exceeded and exceeded.startswith("storage") else "files" if exceeded
                 else "memory" if oom else "time" if timed_out else None)
        if oom and not exceeded:
            exceeded = (f"memory limit: the command needed more than {lim.memory_mb} MB and the container's OOM "
                        "killer stopped it")
        return SandboxResult(exit_code=None if timed_out else rc, wall_sec=wall, timed_out=timed_out,
                             signal=9 if killed else (rc - 128 if rc and rc > 128 else None), backend=self.name,
                             limit_exceeded=exceeded, limit=limit, oom_killed=oom,
                             log_bytes_dropped={k: v for k, v in dropped.items() if v},
                             mechanisms={"memory": "docker --memory (cgroup)", "processes": "docker --pids-limit",
                                         "cpu_quota": f"docker --cpus {lim.cpus}"})
