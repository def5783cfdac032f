"""One container for a whole agent session under docker: each tool call is an ``exec`` in it.

Why: creating, starting and removing a container costs ~0.26 s, an ``exec`` in a running one ~0.06 s
(benchmarks/backend_overhead.py), and an agent makes hundreds of calls. The container gets the hardening
of :func:`.docker_options.container_options` (no network unless the spec asks for the host's, every capability
dropped, no-new-privileges, read-only root, memory, process and file limits); each call runs as the
session's uid in the spec's workdir and environment, with its own timeout and the storage watchdog.

Nothing but the writable mounts survives a call, as with a fresh bwrap sandbox: after every call one
more exec, as the call's uid, counts and kills that uid's processes (``kill -9 -1``: Linux spares PID 1
and the caller) and empties /tmp and /dev/shm. It is an exec of its own rather than a trailer on the
call's shell because a call can kill its own shell, or outlive its timeout, and the same exec is the
timeout's and the watchdog's kill. The container's own processes (docker-init and a sleep) run as
``nobody``, so no call can signal them and the container outlives every call.

stdin: ``put_archive`` cannot write into a tmpfs, so a host directory is bind-mounted read-only at
``/run/workbench-session`` and each call's stdin is a file there, redirected by ``sh``; a streamed stdin (a
person's keys, a file descriptor) is a FIFO there instead, which a host thread fills as the keys come.

Memory: the container's cgroup counts the OOM killer's kills, read before and after each call where the
engine's cgroups are on this host (docker's ``OOMKilled`` flag otherwise). A call whose container died
(an OOM kill that hit its init, an external kill, the keeper's lifetime) says so, and the next call
creates a fresh container: the working copy is a mount and survives, /tmp was emptied after each call.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import select
import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path

from .. import gpus
from ..base import SandboxResult, SandboxSetupError, SandboxSpec
from ..watch import MB, DiskWatch, write_capped
from .image import BASE_IMAGE
from .options import CGROUP_ROOT, POLL_SEC, container_options, limit_verdict

log = logging.getLogger(__name__)
KEEPER_UID = 65534  # nobody: the container's init and sleep, out of reach of the calls' kill -9 -1
STDIN_DIR = "/run/workbench-session"
LABEL = "workbench.session"
LIFETIME_SEC = 24 * 3600  # the keeper's sleep: a workbench killed without cleanup leaves no container for ever
SWEEP = ('n=0; for d in /proc/[0-9]*; do [ -O "$d" ] && n=$((n+1)); done; kill -9 -1 2>/dev/null; '
         'find /tmp /dev/shm -mindepth 1 -delete 2>/dev/null; echo $((n-1))')


class DockerSession:
    """``with box.session(spec) as s: s.run(argv, timeout, out, err)``: the container lives from enter to
    exit and is killed and removed whatever happened."""

    def __init__(self, box, spec: SandboxSpec, lifetime_sec: float = LIFETIME_SEC):
        self.box, self.spec, self.lifetime_sec = box, spec, lifetime_sec
        self.uid = box.uid
        self.token = uuid.uuid4().hex[:12]
        self.containers_started = 0
        self.container = None
        self._dead = False
        self._calls = 0
        self._oom_flag = False
        self._cgroup: Path | None = None
        self._stdin_dir: Path | None = None
        self._gpus = contextlib.ExitStack()  # the session's GPUs, held from enter to close
        self._held: gpus.Held | None = None
        lim = spec.limits
        self.watch = DiskWatch([m.source for m in spec.mounts if m.writable], lim.max_storage_mb, lim.max_files,
                               volumes=[m.volume for m in spec.mounts if m.writable and m.volume is not None])

    @property
    def api(self):
        return self.box.client.api

    def __enter__(self) -> DockerSession:
        ok, why = self.box.available()
        if not ok:
            raise SandboxSetupError(f"docker sandbox unavailable: {why}")
        self._stdin_dir = Path(tempfile.mkdtemp(prefix="workbench-session-stdin-"))
        os.chmod(self._stdin_dir, 0o755)
        try:
            self._held = self._gpus.enter_context(gpus.for_sandbox(self.spec, f"docker session (uid {self.uid})"))
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        opts = container_options(self.spec, self.spec.image or BASE_IMAGE, self.uid, held=self._held)
        opts["user"] = f"{KEEPER_UID}:{KEEPER_UID}"
        opts["volumes"][str(self._stdin_dir)] = {"bind": STDIN_DIR, "mode": "ro"}
        opts["labels"] = {LABEL: self.token}
        try:
            self.container = self.box.client.containers.create(command=["sleep", str(int(self.lifetime_sec))],
                                                                **opts)
            self.container.start()
            self.container.reload()
        except Exception as exc:
            self._remove()
            raise SandboxSetupError(f"docker sandbox: could not start the session's container: {exc}") from exc
        self.containers_started += 1
        self._dead, self._oom_flag = False, False
        self._cgroup = _memory_cgroup(self.container)

    def _remove(self) -> None:
        if self.container is None:
            return
        try:
            self.container.remove(force=True)
        except Exception as exc:  # pragma: no cover - best effort (already gone)
            log.warning("could not remove the session container %s: %s", self.container.id[:12], exc)
        self.container = None

    def close(self) -> None:
        """Kill and remove the container and the stdin directory, and release the GPUs (idempotent)."""
        self._remove()
        self._gpus.close()
        if self._stdin_dir is not None:
            shutil.rmtree(self._stdin_dir, ignore_errors=True)
            self._stdin_dir = None

    # --- one call --------------------------------------------------------------------------------

    def run(self, argv: list[str], timeout: float, stdout: Path, stderr: Path, stdin: bytes | int | None = None
            ) -> SandboxResult:
        if self._stdin_dir is None:
            raise SandboxSetupError("docker session: run() outside its with-block (closed or never opened)")
        if self._dead or self.container is None:
            log.info("docker session %s: its container stopped; starting a fresh one", self.token)
            self._remove()
            self._start()
        self._calls += 1
        fed, stop = None, threading.Event()
        if stdin is not None:
            fed = self._stdin_dir / str(self._calls)
            if isinstance(stdin, int):
                os.mkfifo(fed, 0o644)
                threading.Thread(target=_stream_into, args=(stdin, fed, stop), daemon=True,
                                 name="docker-session-stdin").start()
            else:
                fed.write_bytes(stdin)
            os.chmod(fed, 0o644)
            argv = ["sh", "-c", f'exec "$@" < {STDIN_DIR}/{fed.name}', "workbench-stdin", *argv]
        try:
            return self._call(argv, timeout, Path(stdout), Path(stderr))
        finally:
            stop.set()
            if fed is not None:
                fed.unlink(missing_ok=True)

    def _exec(self, argv: list[str]) -> str:
        return self.api.exec_create(self.container.id, argv, user=f"{self.uid}:{self.uid}",
                                    workdir=self.spec.workdir, environment=dict(self.spec.env))["Id"]

    def _call(self, argv: list[str], timeout: float, stdout: Path, stderr: Path) -> SandboxResult:
        lim = self.spec.limits
        try:
            exec_id = self._exec(argv)
        except Exception as exc:
            if self._alive():
                raise SandboxSetupError(f"docker session: could not start a call in its container: {exc}") from exc
            log.info("docker session %s: its container stopped between calls; starting a fresh one", self.token)
            self._remove()
            self._start()
            try:
                exec_id = self._exec(argv)
            except Exception as exc2:
                raise SandboxSetupError(f"docker session: a fresh container refused the call: {exc2}") from exc2
        ooms = _oom_kills(self._cgroup)
        per_call_peak = _reset_peak(self._cgroup)
        start = time.monotonic()
        dropped: dict[str, int] = {}
        stream = self.api.exec_start(exec_id, stream=True, demux=True)
        pump = threading.Thread(target=_pump, args=(stream, stdout, stderr, lim.max_log_mb * MB, dropped),
                                daemon=True)
        pump.start()
        timed_out, exceeded = False, None
        while True:
            pump.join(POLL_SEC)  # returns at once when the call's output closes
            state = self.api.exec_inspect(exec_id)
            # ended (a background child may still hold its output open); ExitCode is None until it started
            if not state["Running"] and (state["ExitCode"] is not None or not pump.is_alive()):
                break
            if time.monotonic() >= start + timeout:
                timed_out = True
                break
            if (exceeded := self.watch.check()) is not None:
                break
            if not pump.is_alive():  # output closed, process still running
                time.sleep(0.05)
        leftovers = self._sweep()
        pump.join(30)
        info = self.api.exec_inspect(exec_id)
        wall = time.monotonic() - start
        rc = None if timed_out or info.get("Running") else info.get("ExitCode")
        oom = self._oomed(ooms, rc)
        peak = _peak_mb(self._cgroup) if per_call_peak else None
        # a sweep that could not run means the container is unusable, even while the engine still calls it
        # running (a kill is seen by the engine a moment later): the next call gets a fresh one either way
        if leftovers is None or ((rc is None or rc >= 128 or oom) and not self._alive()):
            self._dead = True
        killed = timed_out or exceeded is not None
        limit, exceeded = limit_verdict(exceeded, oom, timed_out, peak, lim.memory_mb, "call")
        if self._dead:
            exceeded = ((exceeded + "; ") if exceeded else "") + (
                "the session's container stopped during the call; the next call starts a fresh one")
        return SandboxResult(exit_code=rc, wall_sec=wall, timed_out=timed_out, peak_memory_mb=peak,
                             signal=9 if killed else (rc - 128 if rc and rc > 128 else None), backend="docker",
                             leftover_processes_killed=leftovers or 0, limit_exceeded=exceeded, limit=limit,
                             oom_killed=oom, log_bytes_dropped={k: v for k, v in dropped.items() if v},
                             mechanisms={"memory": "docker --memory (the session container's cgroup)",
                                         "processes": "docker --pids-limit", "cpu_quota": f"docker --cpus {lim.cpus}",
                                         "session": f"exec in container {self.container.id[:12]}"})

    def _sweep(self) -> int | None:
        """Kill every process of the call's uid and empty /tmp; how many there were (None: the container
        did not answer)."""
        try:
            out = self.api.exec_start(self._exec(["sh", "-c", SWEEP]))
        except Exception as exc:
            log.info("docker session %s: the sweep after a call failed: %s", self.token, exc)
            return None
        try:
            return max(0, int(out.decode().strip().splitlines()[-1]))
        except (ValueError, IndexError):  # no count: the sweep did not run (the engine's error text instead)
            log.info("docker session %s: the sweep after a call answered %r", self.token, out[-200:])
            return None

    def _alive(self) -> bool:
        try:
            self.container.reload()
        except Exception:
            return False
        return self.container.status == "running"

    def _oomed(self, before: int | None, rc: int | None) -> bool:
        after = _oom_kills(self._cgroup)
        if before is not None and after is not None:
            return after > before
        if rc is not None and rc != 137:
            return False
        try:  # no cgroup on this host: docker's flag, which says only that some OOM kill happened since start
            self.container.reload()
            flag = bool(self.container.attrs.get("State", {}).get("OOMKilled"))
        except Exception:
            return False
        new, self._oom_flag = flag and not self._oom_flag, flag or self._oom_flag
        return new


def _stream_into(fd: int, fifo: Path, stop: threading.Event) -> None:
    """Copy ``fd`` into ``fifo`` as it comes, once the call has opened the FIFO (until either side ends or the
    call does: ``stop``). The FIFO is opened without blocking, so a call that never reads holds no thread."""
    out = None
    while out is None and not stop.is_set():
        try:
            out = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            time.sleep(0.05)
    if out is None:
        return
    os.set_blocking(out, True)
    try:
        while not stop.is_set():
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            data = os.read(fd, 1 << 16)
            if not data:
                break
            os.write(out, data)
    except OSError:  # the call ended and closed its end
        pass
    finally:
        os.close(out)


def _pump(stream, stdout: Path, stderr: Path, cap: int, dropped: dict[str, int]) -> None:
    """Demultiplexed exec output into two capped logs: stdout here, stderr through a queue to a writer."""
    errs: queue.SimpleQueue = queue.SimpleQueue()

    def write_err() -> None:
        dropped["stderr"] = write_capped(iter(errs.get, None), stderr, cap)

    writer = threading.Thread(target=write_err, daemon=True)
    writer.start()

    def outs():
        try:
            for out, err in stream:
                if err:
                    errs.put(err)
                if out:
                    yield out
        except Exception as exc:  # the connection dropped (the container was killed under it)
            log.info("docker session: the call's output stream ended with %s", exc)

    try:
        dropped["stdout"] = write_capped(outs(), stdout, cap)
    finally:
        errs.put(None)
        writer.join()


def _memory_cgroup(container) -> Path | None:
    """The container's memory cgroup on this host (cgroupfs driver, v1 or v2), or None (a remote engine,
    the systemd driver)."""
    parent = (container.attrs.get("HostConfig", {}).get("CgroupParent") or "/docker").strip("/")
    for d in (CGROUP_ROOT / "memory" / parent / container.id, CGROUP_ROOT / parent / container.id):
        if (d / "memory.oom_control").is_file() or (d / "memory.events").is_file():
            return d
    return None


def _oom_kills(cg: Path | None) -> int | None:
    if cg is None:
        return None
    for name in ("memory.oom_control", "memory.events"):
        try:
            for line in (cg / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            continue
    return None


def _reset_peak(cg: Path | None) -> bool:
    """Start the call's memory high-water mark (cgroup v1, as root); False where the peak is not per call."""
    if cg is None:
        return False
    try:
        (cg / "memory.max_usage_in_bytes").write_text("0")
        return True
    except OSError:
        return False


def _peak_mb(cg: Path | None) -> float | None:
    if cg is None:
        return None
    try:
        raw = (cg / "memory.max_usage_in_bytes").read_text().strip()
    except OSError:
        return None
    return round(int(raw) / MB, 1) if raw.isdigit() else None
