"""The ``docker`` sandbox: the same guarantees as ``bwrap`` through a Docker engine (docker SDK).

Each command runs in a fresh container of the task's image (built from ``environment/Dockerfile`` by
:func:`.docker_image.task_image`): no network (``network_mode="none"``), every capability dropped, ``no-new-
privileges``, a read-only root filesystem with size-bounded tmpfs ``/tmp`` and ``/dev/shm``, a host uid
of its own (as root; 1000 otherwise), limits on memory (no swap), CPUs, processes, open files and file
size, cores reserved exclusively as its cpuset (with a local engine; the same reservations as bwrap's,
:mod:`.cpus`, so a docker replay and a bwrap replay never share a core), the submission bind-mounted
read-write and everything else the caller mounts read-only. The wall clock, the storage and file-count
watchdog and the capped logs are the same code as for bwrap (:mod:`.watch`); the container is killed and
removed whatever happens. With a local engine on the cgroupfs driver each container runs under a cgroup
parent of its own, which outlives the container: its memory high-water mark is the replay's peak (the
same file bwrap reads), then it is removed.

Execution receipts come from the same recorder as bwrap's (:func:`.recorder.start_for`: eBPF filtered by
the container's host uid, writes into the submission's volume by inode). Programs run from the image, whose read-only
filesystem is their origin (the kernel says which device each executed file was on); their hashes are read
from the stopped container (``get_archive``, :func:`hash_image_programs`), not from the host.

The tests of this backend are marked ``docker``; CI starts an engine and builds its base image from
Debian (no registry is reachable here, see .ci/run).
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

from ...receipts.raw import MEMORY_FS
from .. import gpus
from ..base import SandboxResult, SandboxSetupError, SandboxSpec, chown_tree, pick_uid
from ..cpus import reserve_cpus
from ..recorder import TRUSTED_ROOTS, normalized
from ..recorder import start_for as start_recording
from ..watch import MB, DiskWatch, write_capped
from .image import BASE_IMAGE, connect
from .options import CGROUP_ROOT, INNER_UID, POLL_SEC, container_options, limit_verdict

log = logging.getLogger(__name__)
STDIN_PATH = "/run/workbench-stdin"
MAX_HASHED_PROGRAMS = 64


def _program_sha256(container, path: str, name: str, hops: int = 8) -> str | None:
    """sha256 of the image's file at ``path`` (links followed inside the image), if the file it leads to has
    the name the kernel gave the executed file."""
    for _ in range(hops):
        try:
            stream, _ = container.get_archive(path)
        except Exception:
            return None
        with tempfile.TemporaryFile() as fh:
            for chunk in stream:
                fh.write(chunk)
            fh.seek(0)
            with tarfile.open(fileobj=fh) as tar:
                member = tar.next()
                if member is None:
                    return None
                if member.issym():
                    path = posixpath.normpath(posixpath.join(posixpath.dirname(path), member.linkname))
                    if not normalized(path) or path.split("/")[1] not in TRUSTED_ROOTS:
                        return None
                    continue
                if not member.isfile() or member.size == 0 or posixpath.basename(path) != name:
                    return None  # docker-init: a placeholder for a bind mount
                h, src = hashlib.sha256(), tar.extractfile(member)
                while chunk := src.read(1 << 20):
                    h.update(chunk)
                return h.hexdigest()
    return None


def hash_image_programs(container, record) -> None:
    """Hash the programs the replay executed from the task's image, read from the stopped container. Only
    files the kernel placed on the image's read-only filesystem are looked up, only at a normalized path under
    a trusted root (every such path is the image's own content: nothing under it is writable), and only a file
    with the name the kernel gave the executed file is taken."""
    done = 0
    for e in record.execs:
        key = (e.dev, e.ino)
        if key in record.program_hashes or e.dev in record.writable_devs or e.magic in MEMORY_FS:
            continue
        for path in record.named.get((e.pid, e.start), [])[::-1]:
            if done >= MAX_HASHED_PROGRAMS or not normalized(path) or path.split("/")[1] not in TRUSTED_ROOTS:
                continue
            done += 1
            if (digest := _program_sha256(container, path, e.name)) is not None:
                record.program_hashes[key] = digest
                record.program_paths[key] = path
                break


class DockerSandbox:
    name = "docker"

    def __init__(self, client=None, uid: int | None = None):
        self._client = client
        # as root, each container runs under a host uid of its own (as bwrap's sandboxes do): the recorder's
        # probes filter by it, and no other process on the host shares it
        self.as_root = os.geteuid() == 0
        self.uid = (uid or pick_uid()) if self.as_root else INNER_UID

    @property
    def client(self):
        if self._client is None:
            self._client = connect()
        return self._client

    def available(self) -> tuple[bool, str]:
        try:
            self.client.ping()
            return True, ""
        except Exception as exc:
            return False, f"no Docker engine reachable ({type(exc).__name__}: {exc})"

    def describe(self) -> dict:
        v = self.client.version()
        # no user namespace: the uid inside is the host uid
        return {"backend": self.name, "version": v.get("Version"), "api": v.get("ApiVersion"), "host_uid": self.uid,
                "inner_uid": self.uid}

    def _local(self) -> bool:
        """Whether the engine runs on this host (its unix socket): only then are host core ids and cgroups its."""
        return os.environ.get("DOCKER_HOST", "unix://").startswith("unix://")

    def _cgroup_parent(self) -> str | None:
        """A fresh cgroup parent for one container, where this host holds the engine's cgroups (cgroupfs
        driver, v1 memory controller); None elsewhere (a remote engine, systemd driver): no peak then."""
        if not self._local() or not (CGROUP_ROOT / "memory").is_dir() \
                or self.client.info().get("CgroupDriver") != "cgroupfs":
            return None
        return f"/workbench-docker-{uuid.uuid4().hex[:12]}"

    def prepare(self, path: Path) -> None:
        """Hand a staging tree to the container's user so it can write its outputs."""
        if self.as_root:
            chown_tree(path, self.uid)

    def session(self, spec: SandboxSpec):
        """One container for many calls, each an ``exec`` (:mod:`.docker_session`)."""
        from .session import DockerSession

        return DockerSession(self, spec)

    def run(self, argv: list[str], spec: SandboxSpec, stdout: Path, stderr: Path,
            stdin: bytes | None = None) -> SandboxResult:
        ok, why = self.available()
        if not ok:
            raise SandboxSetupError(f"docker sandbox unavailable: {why}")
        if not self._local():
            if spec.limits.gpus or spec.held:
                raise SandboxSetupError("docker sandbox: GPUs are reserved on this host, so a task that needs "
                                        "them runs on a local engine (DOCKER_HOST names a remote one)")
            return self._run(argv, spec, stdout, stderr, stdin, [])
        queued = time.monotonic()
        with gpus.for_sandbox(spec, f"docker sandbox (uid {self.uid})") as held, \
                reserve_cpus(spec.limits.cpus, spec.owner) as cores:  # exclusive, shared with bwrap's
            queued_sec = time.monotonic() - queued
            result = self._run(argv, spec, stdout, stderr, stdin, cores, held)
            result.gpus = held.record()
        result.queued_sec, result.cores = round(queued_sec, 3), cores
        return result

    def _run(self, argv: list[str], spec: SandboxSpec, stdout: Path, stderr: Path, stdin: bytes | None,
             cores: list[int], held: gpus.Held | None = None) -> SandboxResult:
        image = spec.image or BASE_IMAGE
        opts = container_options(spec, image, self.uid, cores, held)
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
        parent = self._cgroup_parent()
        if parent:
            opts["cgroup_parent"] = parent
        try:
            container = self.client.containers.create(command=argv, **opts)
        except Exception as exc:
            _remove_cgroup_parent(parent)
            raise SandboxSetupError(f"docker sandbox: could not create the container: {exc}") from exc
        recorder, unrecorded = start_recording(spec, self.uid if self.as_root else None)
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
            if recorder is not None:
                recorder.__exit__()
                hash_image_programs(container, recorder.record)
        finally:
            if recorder is not None:  # stopping twice is harmless
                recorder.__exit__()
            try:
                container.remove(force=True)
            except Exception as exc:  # pragma: no cover - best effort
                log.warning("could not remove container %s: %s", getattr(container, "id", "?"), exc)
            if stdin_dir is not None:
                for p in stdin_dir.iterdir():
                    p.unlink()
                stdin_dir.rmdir()
            peak = _peak_memory_mb(parent, lim.memory_mb)  # read after the container is gone: the parent keeps its mark
            _remove_cgroup_parent(parent)
        wall = time.monotonic() - start
        killed = timed_out or exceeded is not None
        limit, exceeded = limit_verdict(exceeded, oom, timed_out, peak, lim.memory_mb, "command")
        return SandboxResult(exit_code=None if timed_out else rc, wall_sec=wall, timed_out=timed_out,
                             peak_memory_mb=peak,
                             signal=9 if killed else (rc - 128 if rc and rc > 128 else None), backend=self.name,
                             limit_exceeded=exceeded, limit=limit, oom_killed=oom,
                             log_bytes_dropped={k: v for k, v in dropped.items() if v},
                             mechanisms={"memory": "docker --memory (cgroup" + (", peak from its parent)" if parent
                                                                                else ")"),
                                         "processes": "docker --pids-limit",
                                         **({"cores": "cgroup cpuset (docker --cpuset-cpus)"} if cores else {}),
                                         "cpu_quota": f"docker --cpus {lim.cpus}"},
                             record=recorder.record if recorder is not None else None, record_unavailable=unrecorded)


def _peak_memory_mb(parent: str | None, limit_mb: int) -> float | None:
    if parent is None:
        return None
    try:
        raw = (CGROUP_ROOT / "memory" / parent.lstrip("/") / "memory.max_usage_in_bytes").read_text().strip()
    except OSError:
        return None
    if not raw.isdigit():
        return None
    # the parent is charged in per-CPU batches ahead of use (measured: 256 KB past the container's own limit
    # on 2 cores); the container itself never holds more than its limit, so the peak is capped there
    return round(min(int(raw), limit_mb * MB) / MB, 1)


def _remove_cgroup_parent(parent: str | None) -> None:
    """The engine creates the parent in every controller and never removes it; an empty one is rmdir'd."""
    if parent is None:
        return
    for d in CGROUP_ROOT.glob(f"*/{parent.lstrip('/')}"):
        try:
            d.rmdir()
        except OSError as exc:  # pragma: no cover - best effort (a process still in it)
            log.warning("could not remove cgroup %s: %s", d, exc)
