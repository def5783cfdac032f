"""The local sandbox: bubblewrap, run as an unprivileged host user.

Measured on these machines (notes §9): bwrap run by root keeps capabilities unless told otherwise,
and with ``--unshare-user`` alone the sandbox user maps to host root, which can then read root-owned
files such as /etc/shadow and is exempt from RLIMIT_NPROC. So when the workbench runs as root it drops
to a fresh, otherwise unused host uid (``setpriv``) before starting bwrap: file permissions and the
process limit then apply, and every process with that uid is ours to kill afterwards.

Limits: where the host offers cgroups (:mod:`.cgroups`), resident memory, processes, a cpuset the
sandbox cannot widen and a CPU quota are the kernel's; otherwise address space (RLIMIT_AS =
memory_mb) and RLIMIT_NPROC stand in, and the provenance says which applied. Always: open files, file
size (RLIMIT_FSIZE), affinity to the reserved cores, a wall clock, capped stdout/stderr logs, and the
size and file count of the writable mounts (:mod:`.volume`: a filesystem of their own size where the
host allows it; :mod:`.watch` polls them too). Everything else is read-only or size-bounded: the root
and /dev are remounted read-only, /tmp and /dev/shm are tmpfs of bounded size (they live in RAM), and
nested user namespaces are disabled (``--disable-userns``), so no process inside can gain capabilities
to remount or bind anything. ``cpus`` cores are reserved exclusively (see :mod:`.cpus`).
``--die-with-parent`` with a pid namespace makes the kernel kill every descendant when bwrap dies.

Less to see from inside: only the parts of /etc that programs need are bound (:data:`ETC`), bwrap
reads its arguments from a pipe (``--args``), so its command line inside shows no host path, and
writable mounts come from their own volumes, so mountinfo shows no host staging directory.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path

from ..errors import WorkbenchError
from . import gpus
from .base import Limits, PerCallSession, SandboxResult, SandboxSetupError, SandboxSpec, chown_tree, pick_uid
from .cgroups import Cgroup
from .cpus import reserve_cpus
from .endpoint import SOCKET_DIR, HostForwarder, inner_command, parse_endpoint
from .recorder import hash_host_programs
from .recorder import start_for as start_recording
from .watch import MB, DiskWatch, drain

log = logging.getLogger(__name__)

INNER_UID = 1000
KILL_GRACE_SEC = 2.0
POLL_SEC = 0.2
LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
# the parts of the host's /etc that programs in a sandbox need: users and groups, name resolution, the
# dynamic loader, TLS certificates, Debian's alternatives (e.g. libblas.so.3 and mpirun link through
# /etc/alternatives), time zone, fonts and the config files scientific packages read; nothing else
ETC = ("passwd", "group", "hosts", "host.conf", "resolv.conf", "nsswitch.conf", "gai.conf", "protocols", "services",
       "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ssl", "ca-certificates", "ca-certificates.conf",
       "alternatives", "localtime", "timezone", "mime.types", "os-release", "debian_version", "fonts",
       "matplotlibrc", "python3", "openmpi", "mpich", "terminfo", "inputrc", "bash.bashrc", "profile", "magic",
       "magic.mime", "xdg", "gtk-3.0", "ImageMagick-6", "gprofng.rc")


def _merged_usr_links() -> list[str]:
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), f"/{name}"]
        elif p.is_dir():
            args += ["--ro-bind", str(p), f"/{name}"]
    return args


def _prlimit_args(limits: Limits, address_space: bool = True) -> list[str]:
    """rlimits; RLIMIT_AS only without a memory cgroup (it kills programs that reserve address space)."""
    mb = 1024 * 1024
    return [
        "prlimit",
        *([f"--as={limits.memory_mb * mb}"] if address_space else []),
        f"--nproc={limits.max_processes}",
        f"--nofile={limits.max_open_files}",
        f"--fsize={limits.max_file_mb * mb}",
        "--core=0",
        "--",
    ]


def _etc_args() -> list[str]:
    args = ["--dir", "/etc"]
    for name in ETC:
        p = Path("/etc") / name
        if p.exists():
            args += ["--ro-bind", str(p), str(p)]
    return args


def unreachable(path: Path, writable: bool = False) -> str | None:
    """Why an unprivileged user ("others") cannot use ``path`` as a mount source, or None."""
    path = Path(path).absolute()
    for parent in reversed(path.parents):
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return f"{parent} is mode {stat.S_IMODE(os.stat(parent).st_mode):04o} (others cannot enter it)"
    if not os.stat(path).st_mode & (stat.S_IROTH if path.is_file() else stat.S_IXOTH | stat.S_IROTH):
        return f"{path} is mode {stat.S_IMODE(os.stat(path).st_mode):04o} (others cannot read it)"
    return None


def kill_uid(uid: int) -> int:
    """SIGKILL every process owned by uid (a sandbox uid is never shared); returns how many."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "X"):  # already dead, waiting to be reaped
                continue
            os.kill(int(entry.name), signal.SIGKILL)
            killed += 1
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
            continue
    return killed


class BwrapSandbox:
    name = "bwrap"

    def __init__(self, uid: int | None = None):
        self.as_root = os.geteuid() == 0
        self.uid = (uid or pick_uid()) if self.as_root else os.geteuid()

    def available(self) -> tuple[bool, str]:
        for tool in ("bwrap", "prlimit", "taskset") + (("setpriv",) if self.as_root else ()):
            if shutil.which(tool) is None:
                return False, f"`{tool}` not found (install Debian's bubblewrap and util-linux)"
        return True, ""

    def describe(self) -> dict:
        version = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout.strip()
        return {"backend": self.name, "version": version, "host_uid": self.uid, "inner_uid": INNER_UID}

    def check_mounts(self, spec: SandboxSpec) -> None:
        """Fail early, and clearly, when the unprivileged sandbox user could not reach a mount source."""
        for m in spec.mounts:
            if not m.source.exists():
                raise SandboxSetupError(f"sandbox: mount source {m.source} does not exist")
            if self.as_root and m.source.stat().st_uid != self.uid:
                why = unreachable(m.source)
                if why:
                    raise SandboxSetupError(
                        f"sandbox: {m.source} is not reachable by the unprivileged sandbox user: {why}. "
                        "Keep task environments in a world-readable place (WORKBENCH_ENVS) or chmod o+x the parents."
                    )

    def launcher(self, spec: SandboxSpec, cores: list[int] | None = None, address_space: bool = True) -> list[str]:
        """What runs on the host before bwrap: rlimits, the drop to the sandbox uid, the core pinning."""
        cmd = _prlimit_args(spec.limits, address_space)
        if self.as_root:
            cmd += ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--"]
        if cores:
            cmd += ["taskset", "-c", ",".join(map(str, cores))]
        return cmd

    def command(self, argv: list[str], spec: SandboxSpec, started_fd: int | None = None,
                cores: list[int] | None = None, address_space: bool = True) -> list[str]:
        """The whole command line (launcher, bwrap and its options, the command), as one list."""
        return [*self.launcher(spec, cores, address_space), "bwrap", *self.bwrap_options(spec), "--",
                *self.entry(argv, started_fd)]

    def bwrap_options(self, spec: SandboxSpec, endpoint_dir: Path | None = None,
                      held: gpus.Held | None = None) -> list[str]:
        """bwrap's options: what it reads from its ``--args`` pipe. ``endpoint_dir``: the host forwarder's
        socket and hosts file, for the ``endpoint`` policy (its own network namespace, one socket in it);
        ``held``: the GPUs reserved for it (their device nodes are all of the host's /dev it sees)."""
        if spec.network not in ("none", "host", "endpoint"):
            raise WorkbenchError(f"bwrap sandbox: unknown network policy {spec.network!r} (none, host or endpoint)")
        cmd = [
            "--unshare-all", "--unshare-user", "--disable-userns",
            "--uid", str(INNER_UID), "--gid", str(INNER_UID),
            *(["--share-net"] if spec.network == "host" else []),
            "--hostname", "sandbox", "--cap-drop", "ALL",
            "--die-with-parent", "--new-session", "--clearenv",
            "--ro-bind", "/usr", "/usr", *_merged_usr_links(), *_etc_args(),
            "--dev", "/dev", "--size", str(spec.limits.tmp_mb * MB // 4), "--tmpfs", "/dev/shm",
            "--proc", "/proc", "--size", str(spec.limits.tmp_mb * MB), "--tmpfs", "/tmp", "--dir", "/home",
        ]
        if spec.network == "endpoint":
            if endpoint_dir is None:
                raise WorkbenchError("bwrap sandbox: network policy endpoint without its forwarder")
            cmd += ["--ro-bind", str(endpoint_dir), SOCKET_DIR, "--ro-bind", str(endpoint_dir / "hosts"), "/etc/hosts"]
        for m in spec.mounts:
            cmd += ["--bind" if m.writable else "--ro-bind", str(m.source), m.target]
        for node, target in held.binds() if held else []:
            cmd += ["--dev-bind", node, target]
        cmd += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", spec.workdir]
        for k, v in {**spec.env, **(held.env() if held and held.gpus else {})}.items():
            cmd += ["--setenv", k, v]
        return cmd

    @staticmethod
    def entry(argv: list[str], started_fd: int | None = None, port: int | None = None) -> list[str]:
        """The command; with ``started_fd`` the first process inside reports that the sandbox exists, then
        closes the pipe so the submission cannot write to it, and becomes the user's command. With ``port``
        (the endpoint policy) it first starts the inner forwarder on 127.0.0.1:port."""
        if started_fd is None:
            return list(argv)
        forward = (f"{inner_command(port)} || {{ echo 'sandbox: the endpoint forwarder could not listen on "
                   f"127.0.0.1:{port}' >&2; exit 125; }}; ") if port else ""
        return ["/bin/bash", "-c", f'printf started >&{started_fd}; exec {started_fd}>&-; {forward}exec "$@"',
                "sandbox-entry", *argv]

    def prepare(self, path: Path) -> None:
        """Hand a staging tree to the sandbox user (root only; otherwise it is ours already)."""
        if self.as_root:
            chown_tree(path, self.uid)

    def session(self, spec: SandboxSpec) -> PerCallSession:
        """A fresh bwrap per call: starting one costs ~30 ms, and nothing of a call can survive it."""
        return PerCallSession(self, spec)

    def run(self, argv: list[str], spec: SandboxSpec, stdout: Path, stderr: Path,
            stdin: bytes | int | None = None) -> SandboxResult:
        ok, why = self.available()
        if not ok:
            raise WorkbenchError(f"bwrap sandbox unavailable: {why}")
        self.check_mounts(spec)
        queued = time.monotonic()
        with gpus.for_sandbox(spec, f"bwrap sandbox (uid {self.uid})") as held, \
                reserve_cpus(spec.limits.cpus, spec.owner) as cores:
            queued_sec = time.monotonic() - queued
            if queued_sec > 1:
                log.info("waited %.1f s for %d free core(s)", queued_sec, len(cores))
            result = self._execute(argv, spec, stdout, stderr, cores, stdin, held)
            result.gpus = held.record()
        result.queued_sec = round(queued_sec, 3)
        result.cores = cores
        return result

    def _execute(self, argv: list[str], spec: SandboxSpec, stdout: Path, stderr: Path,
                 cores: list[int], stdin: bytes | int | None = None, held: gpus.Held | None = None
                 ) -> SandboxResult:
        lim = spec.limits
        cg = Cgroup.create(f"sandbox-{self.uid}-{secrets.token_hex(4)}", memory_mb=lim.memory_mb,
                           max_processes=lim.max_processes, cores=cores, cpus=lim.cpus) if self.as_root else None
        mechanisms = {"memory": "rlimit-as (address space)", "processes": "rlimit-nproc (per uid)",
                      "cores": "taskset (the sandbox could widen it)", **(cg.mechanisms if cg else {})}
        try:
            if spec.network != "endpoint":
                return self._launch(argv, spec, stdout, stderr, cores, stdin, cg, mechanisms, held=held)
            host, port = parse_endpoint(spec.endpoint or "")
            with HostForwarder(host, port, self.uid if self.as_root else None,
                               os.environ.get("WORKBENCH_SCRATCH") or None) as endpoint_dir:
                return self._launch(argv, spec, stdout, stderr, cores, stdin, cg, mechanisms, (endpoint_dir, port),
                                    held=held)
        finally:
            if cg is not None:
                cg.remove()

    def _launch(self, argv, spec, stdout, stderr, cores, stdin, cg: Cgroup | None, mechanisms,
                endpoint: tuple[Path, int] | None = None, held: gpus.Held | None = None) -> SandboxResult:
        lim = spec.limits
        started_r, started_w = os.pipe()
        args_r, args_w = os.pipe()
        # bwrap takes its options from the pipe (they name host paths), the command from its command line
        args = self.bwrap_options(spec, endpoint[0] if endpoint else None, held)
        cmd = [*self.launcher(spec, cores, address_space="cgroup" not in mechanisms["memory"]),
               "bwrap", "--args", str(args_r), "--", *self.entry(argv, started_w, endpoint[1] if endpoint else None)]
        log.debug("sandbox command: %s %s", cmd, args)
        watch = DiskWatch([m.source for m in spec.mounts if m.writable], lim.max_storage_mb, lim.max_files,
                          volumes=[m.volume for m in spec.mounts if m.writable and m.volume is not None])
        recorder, unrecorded = start_recording(spec, self.uid if self.as_root else None)
        start = time.monotonic()
        timed_out, exceeded = False, None
        try:
            # a minimal environment for the launcher chain: bwrap's own /proc/1/environ is readable from
            # inside, and --clearenv only clears what the command gets (credentials would leak otherwise);
            # bwrap reads its options from a pipe, so its command line inside names no host path
            # stdin: nothing, bytes fed through a pipe, or a stream's fd handed over as it is (a person's keys)
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL if stdin is None else stdin
                                    if isinstance(stdin, int) else subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                    pass_fds=(started_w, args_r), env=LAUNCH_ENV,
                                    preexec_fn=cg.join if cg is not None else None)
        except BaseException:
            if recorder is not None:
                recorder.__exit__()
            raise
        finally:
            os.close(started_w)
            os.close(args_r)
        blob = b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args)
        threading.Thread(target=_feed, args=(args_w, blob), daemon=True, name="sandbox-args").start()
        dropped: dict[str, int] = {}
        def pump(name: str, pipe, path: Path) -> None:
            dropped[name] = drain(pipe, path, lim.max_log_mb * MB)

        drains = [threading.Thread(target=pump, args=a, daemon=True, name=f"sandbox-{a[0]}")
                  for a in (("stdout", proc.stdout, stdout), ("stderr", proc.stderr, stderr))]
        for t in drains:
            t.start()
        if isinstance(stdin, bytes):
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        deadline = start + lim.timeout_sec
        try:
            while True:
                try:
                    proc.wait(timeout=max(0.0, min(POLL_SEC, deadline - time.monotonic())))
                    break
                except subprocess.TimeoutExpired:
                    pass
                if time.monotonic() >= deadline:
                    timed_out = True
                elif (exceeded := watch.check()) is None:
                    continue
                _killpg(proc.pid)
                try:
                    proc.wait(timeout=KILL_GRACE_SEC * 5)
                except subprocess.TimeoutExpired:
                    log.error("sandbox process %s survived SIGKILL", proc.pid)
                break
        except BaseException:
            _killpg(proc.pid)
            proc.wait()
            if recorder is not None:
                recorder.__exit__()
            raise
        finally:
            leftovers = ((cg.kill() if cg is not None else 0)
                         + (kill_uid(self.uid) if self.as_root and not spec.shared_uid else 0))
            for t in drains:  # the pipes close once every process holding them is gone
                t.join(timeout=KILL_GRACE_SEC * 5)
        wall = time.monotonic() - start
        if recorder is not None:
            recorder.__exit__()
            # the task's environment is shared read-only at its own path, as /usr is
            hash_host_programs(recorder.record, roots=tuple(m.target for m in spec.mounts
                                                            if not m.writable and str(m.source) == m.target))
        usage = cg.usage() if cg is not None else {}
        oom = bool(usage.get("oom_kills"))
        limit = "storage" if exceeded and exceeded.startswith("storage") else "files" if exceeded else None
        if oom and not exceeded:
            limit = "memory"
            exceeded = (f"memory limit: the command needed more than {lim.memory_mb} MB of resident memory and the "
                        f"kernel's OOM killer stopped it (peak {usage.get('peak_memory_mb')} MB)")
        if timed_out and limit is None:
            limit = "time"
        with os.fdopen(started_r, "rb") as fh:
            started = fh.read() == b"started"  # written by the first process inside the sandbox
        if not started and not timed_out:
            detail = Path(stderr).read_text(errors="replace").strip()[-2000:]
            raise SandboxSetupError(f"sandbox: bwrap could not set up the sandbox: {detail or 'no message'}")
        rc = proc.returncode
        return SandboxResult(
            exit_code=None if timed_out else rc,
            wall_sec=wall,
            timed_out=timed_out,
            signal=-rc if rc is not None and rc < 0 else None,
            backend=self.name,
            leftover_processes_killed=leftovers,
            limit_exceeded=exceeded,
            limit=limit,
            log_bytes_dropped={k: v for k, v in dropped.items() if v},
            peak_memory_mb=usage.get("peak_memory_mb"),
            oom_killed=oom,
            mechanisms=mechanisms,
            record=recorder.record if recorder is not None else None,
            record_unavailable=unrecorded,
        )


def _feed(fd: int, data: bytes) -> None:
    """Write bwrap's arguments into its --args pipe (from a thread: they may exceed the pipe's buffer)."""
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except BrokenPipeError:
        pass


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
