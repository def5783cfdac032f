"""The session's sandboxed workspace: where an agent's tool calls run.

Layout inside the sandbox::

    /home/submission/        the working copy (read-write; starts as the starter submission)
    /home/task/instruction.md, /home/task/paper/   the public task (read-only)
    /home/task/context/      what a controller shows besides it (a discovery run's history; read-only)
    <environment dir>        the task's environment (read-only, first on PATH)
    /tmp                     fresh for every call

Nothing private is ever mounted. Every command, read and write goes through the workspace's sandbox
session (``box.session``: a fresh bwrap per call, ~30 ms; under docker one container for the whole
session and an ``exec`` per call, ~0.14 s instead of ~0.38 s for a container per call, with every
process of a call killed and /tmp emptied after it: benchmarks/backend_overhead.py), so a symlink the
agent plants cannot make the workbench, which runs as root on the host, read or write a host file. The
working copy and the public task live on a volume of their own (:mod:`workbench.sandbox.volume`: sized,
and nothing of the host's layout in the sandbox's mountinfo) and are copied back to the trial's
``session/submission/`` when the workspace closes, whatever ended the session (every sandbox of the
session has ended by then).

While the agent still runs (a CLI agent calling the scoring service), its processes can swap a
directory for a symlink at any moment, so a copy made on the host, as root, could be raced into
following it to a private file. :meth:`Workspace.snapshot` therefore copies from inside a sandbox of
the same user, which sees nothing but the working copy: whatever it follows, it finds nothing private.

GPUs are default-deny here too: a task's GPUs are visible to the session's sandboxes only while the session
holds them (:meth:`Workspace.acquire_gpus` ... :meth:`Workspace.release_gpus`, a
:class:`~workbench.sandbox.gpus.Lease` whose every acquisition is recorded), so sessions that share a host's
GPUs hold one only while they use it.
"""


from __future__ import annotations

import json
import logging
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..io import copy_tree, remove_tree
from ..sandbox import Limits, Mount, SandboxResult, SandboxSpec, get_sandbox
from ..sandbox.base import sandbox_env
from ..sandbox.gpus import Held, Lease
from ..sandbox.volume import Volume
from .public_task import PublicTask, truncate

log = logging.getLogger(__name__)
HOME = "/home/submission"
TASK_HOME = "/home/task"


@dataclass
class CommandResult:
    exit_code: int | None
    output: str  # stdout + stderr, truncated for a model or a trajectory
    timed_out: bool
    stdout: str = ""  # untruncated stdout (capped at 4 MB), for parsers


class Workspace:
    def __init__(self, view: PublicTask, submission: Path, *, env_dir: str | None, network: str = "none",
                 sandbox: str = "bwrap", extra_env: dict[str, str] | None = None, image: str | None = None,
                 endpoint: str | None = None):
        self.view = view
        self.endpoint = endpoint  # with network = endpoint: the one base URL the sandbox reaches
        self.prefixes: list[Path] = []  # installed tools (a CLI agent's): bound read-only, their bin/ on PATH
        self.target = Path(submission)
        self.env_dir = env_dir
        self.network = network
        self.box = get_sandbox(sandbox)
        self.image = image
        self.extra_env = dict(extra_env or {})
        scratch = os.environ.get("WORKBENCH_SCRATCH") or None
        self.staging = Path(tempfile.mkdtemp(prefix="workbench-session-", dir=scratch))
        os.chmod(self.staging, 0o711)
        defaults = Limits(timeout_sec=1, memory_mb=view.memory_mb, cpus=view.cpus, gpus=view.gpus)
        self.volume = Volume.create(self.staging / "vol", defaults.max_storage_mb, defaults.max_files)
        self.work = self.volume.root / "submission"
        self.public = self.volume.root / "task"
        self.logs = self.staging / "logs"
        if self.target.is_dir():
            copy_tree(self.target, self.work)
        else:
            self.work.mkdir()
        self.public.mkdir()
        (self.public / "instruction.md").write_text(view.instruction, encoding="utf-8")
        if view.paper_dir is not None:
            copy_tree(view.paper_dir, self.public / "paper")
        if view.context_dir is not None:
            copy_tree(view.context_dir, self.public / "context")
        self.logs.mkdir()
        self.box.prepare(self.work)
        self.box.prepare(self.public)
        self.calls = 0
        self._session = None  # opened by the first call, with the environment as it is then
        self.scoring: tuple[str, str] | None = None  # (url, token) of the session's scoring service
        self.owner = f"workspace-{os.getpid()}-{id(self)}"  # its sandboxes' cores, lent to its scoring service
        self.gpus = Lease(view.gpus, f"a session ({self.owner})")  # run_session names the trial
        self.inbox: Path | None = None  # messages from a person, outside the sandbox (TrialPaths.inbox)
        self._read_messages = 0

    def new_messages(self) -> list[str]:
        """Messages a person sent to this session since the last call (a discovery run's human in the loop)."""
        if self.inbox is None or not self.inbox.is_file():
            return []
        lines = self.inbox.read_text(encoding="utf-8", errors="replace").splitlines()
        new, self._read_messages = lines[self._read_messages:], len(lines)
        out = []
        for line in new:
            try:
                out.append(str(json.loads(line)["text"]))
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def attach_scoring(self, url: str, token: str) -> None:
        """Offer the hidden scoring service: to tool-calling agents as a tool, to CLI agents through
        WORKBENCH_SCORING_URL/TOKEN (reachable from the sandbox only with network = host)."""
        self.scoring = (url, token)
        self.extra_env.update(WORKBENCH_SCORING_URL=url, WORKBENCH_SCORING_TOKEN=token)
        self._close_session()  # the next call opens one with this environment

    def set_endpoint(self, url: str) -> None:
        """The model API the ``endpoint`` network policy bridges in (the agent's configured base URL)."""
        self.endpoint = url
        self._close_session()

    def acquire_gpus(self, wait_sec: float | None = None) -> Held:
        """Hold the task's GPUs for this session until :meth:`release_gpus` (or the session's end): the next
        commands see them. Raises :class:`~workbench.sandbox.gpus.GpusBusy` when others still hold them after
        ``wait_sec`` (None: wait), and WorkbenchError for a task without GPUs."""
        held = self.gpus.acquire(wait_sec)
        self._close_session()  # the next call opens a sandbox with the GPUs' device nodes
        return held

    def release_gpus(self) -> bool:
        """Give the session's GPUs back (False when it held none); its next commands see none."""
        if self.gpus.held is None:
            return False
        self._close_session()  # nothing of the session's may run on them once they are another's
        return self.gpus.release()

    def add_prefix(self, prefix: Path) -> None:
        """Make an installed tool visible: ``prefix`` read-only at the same path, ``prefix/bin`` first on PATH
        (a CLI installed outside /usr, e.g. by .ci/agent-clis, which the sandbox would not see otherwise)."""
        self.prefixes.append(Path(prefix).resolve())
        self._close_session()

    # --- running ---------------------------------------------------------------------------------

    def spec(self, timeout: float) -> SandboxSpec:
        mounts = [Mount(self.work, HOME, writable=True, volume=self.volume),
                  Mount(self.public, TASK_HOME, writable=False)]
        if self.env_dir:
            mounts.append(Mount(Path(self.env_dir), self.env_dir, writable=False))
        mounts += [Mount(p, str(p), writable=False) for p in self.prefixes]
        limits = Limits(timeout_sec=max(1.0, timeout), memory_mb=self.view.memory_mb, cpus=self.view.cpus)
        env = {**sandbox_env(self.env_dir, self.view.cpus, keep_path=self.image is not None), "WORKBENCH_SESSION": "1",
               **self.extra_env}
        env.pop("WORKBENCH_REPLAY", None)
        if self.prefixes and "PATH" in env:
            env["PATH"] = ":".join([*(f"{p}/bin" for p in self.prefixes), env["PATH"]])
        return SandboxSpec(mounts=mounts, workdir=HOME, limits=limits, env=env, network=self.network, image=self.image,
                           endpoint=self.endpoint, owner=self.owner, held=self.gpus.held)

    def run(self, command: str, timeout: float, stdin: bytes | None = None, limit: int | None = None
            ) -> CommandResult:
        """Run a shell command in the session's sandbox over the working copy; output merged and truncated."""
        self.calls += 1
        out, err = self.logs / f"{self.calls}.out", self.logs / f"{self.calls}.err"
        if self._session is None:  # the limits are the session's; only the timeout varies by call
            self._session = self.box.session(self.spec(1.0)).__enter__()
        res = self._session.run(["bash", "-c", command], self.spec(timeout).limits.timeout_sec, out, err,
                                stdin=stdin)
        with open(out, "rb") as fh:
            stdout = fh.read(4 << 20).decode("utf-8", errors="replace")
        text = stdout + err.read_text(errors="replace")
        for p in (out, err):
            p.unlink(missing_ok=True)
        return CommandResult(res.exit_code, truncate(text) if limit is None else truncate(text, limit),
                             res.timed_out, stdout)

    def attach(self, command: list[str], timeout: float, stdin: int, output: Path) -> SandboxResult:
        """Run one interactive command (a person's shell) in the session's sandbox, under the session's limits.

        Args:
            command: the argv to run (it brings its own pty, e.g. ``script``).
            timeout: seconds before it is killed (the session's time left).
            stdin: a file descriptor streamed into the command as it comes (the person's keys).
            output: where its output goes as it comes: a FIFO the caller reads (capped at the log limit).

        Returns:
            The sandbox's result: exit code, ``timed_out`` when the time ran out first.
        """
        self.calls += 1
        err = self.logs / f"{self.calls}.err"
        if self._session is None:
            self._session = self.box.session(self.spec(1.0)).__enter__()
        try:
            return self._session.run(command, self.spec(timeout).limits.timeout_sec, output, err, stdin=stdin)
        finally:
            err.unlink(missing_ok=True)

    def read_file(self, path: str, timeout: float, max_bytes: int = 200_000) -> CommandResult:
        return self.run(f"head -c {int(max_bytes)} -- {_quote(path)}", timeout, limit=max_bytes + 100)

    def write_file(self, path: str, content: str, timeout: float) -> CommandResult:
        q = _quote(path)
        return self.run(f'mkdir -p -- "$(dirname -- {q})" && cat > {q} && echo "wrote $(wc -c < {q}) bytes"',
                        timeout, stdin=content.encode("utf-8"))

    # --- closing ---------------------------------------------------------------------------------

    def snapshot(self, dest: Path, timeout: float = 300.0) -> None:
        """Copy the working copy, as it is now, into the fresh directory ``dest``, from inside a sandbox of
        the session's user that sees only the working copy (read-only) and ``dest``: the copy follows no
        link, and an agent racing it can point it at nothing outside the working copy."""
        dest = Path(dest)
        dest.mkdir(parents=True)
        self.box.prepare(dest)
        logs = Path(tempfile.mkdtemp(prefix="snapshot-", dir=self.staging))
        spec = SandboxSpec(mounts=[Mount(self.work, "/home/submission", writable=False),
                                   Mount(dest, "/snapshot", writable=True)], workdir="/",
                           limits=Limits(timeout_sec=timeout, memory_mb=512, cpus=1), env={"PATH": "/usr/bin:/bin"},
                           network="none", image=self.image, shared_uid=True)
        res = self.box.run(["cp", "-a", "--no-dereference", "--", "/home/submission/.", "/snapshot/"], spec,
                           logs / "out", logs / "err")
        if res.exit_code != 0:  # files the agent removed mid-copy, or a flood: the copy holds what it could
            log.info("snapshot of the working copy: exit %s: %s", res.exit_code,
                     (logs / "err").read_text(errors="replace")[-300:])
        remove_tree(logs)

    def close(self) -> None:
        """End the sandbox session, copy the working copy back to the trial (whatever ended the session)
        and clean up."""
        try:
            self._close_session()
        finally:
            self.gpus.release()
            remove_tree(self.target)
            copy_tree(self.work, self.target)
            self.volume.release()
            remove_tree(self.staging)

    def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.__exit__(None, None, None)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _quote(path: str) -> str:
    return shlex.quote(path)


def version_of(command: list[str]) -> str | None:
    """A tool's version string on the host (for recording which CLI agent ran)."""
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None
