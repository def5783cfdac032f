"""Warm kernels: stage notebooks run on kernels forked from a template that did the imports once.

A cold stage kernel costs about a second before its first cell: an interpreter, ipykernel, then
pandas and matplotlib for the displays. Each process that executes stage notebooks (a ``workbench
run``, every batch worker of the local pool, Dask or SLURM) starts one template (``python -m
workbench.jupyter.kernel --zygote``, see :mod:`workbench.jupyter.kernel`) that imports all that once; every notebook
then gets a kernel forked from it. jupyter_client and nbclient drive that kernel exactly as a launched
one (:class:`WarmKernelManager` is an ordinary kernel manager whose provisioner forks instead of
spawning), so papermill's output is the same notebook. The template dies with the thread that
started it (``PR_SET_PDEATHSIG``): the kernel pool's own thread, which lives as long as the pool.

Isolation is by construction, not by reset: a kernel serves one notebook and exits, and the template
never runs notebook code, so no variable, monkey-patch, working directory or environment change
survives into the next notebook. What the template fixed at its start (the environment it was started
with, hence interpreter settings and module-level reads of it) is its key: when the environment a
kernel would be launched with differs, the template is replaced.

The pool that starts these kernels ahead and the papermill engine on it are :mod:`workbench.jupyter.pool`.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from traitlets import DottedObjectName, Type

log = logging.getLogger(__name__)

START_TIMEOUT_SEC = 120.0


class TemplateFailed(RuntimeError):
    """The template could not start or fork; the caller launches the kernel cold instead."""


class _Template:
    """One ``workbench.jupyter.kernel --zygote`` process and the socket it takes fork requests on."""

    def __init__(self, env: dict[str, str]):
        self.key = _key(env)
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen([sys.executable, "-m", "workbench.jupyter.kernel", "--zygote",
                                      str(theirs.fileno())],
                                     pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        theirs.close()
        self.sock, self.reader = ours, ours.makefile("rb")
        self.sock.settimeout(START_TIMEOUT_SEC)
        if self._reply().get("ready") is not True:
            raise TemplateFailed("the kernel template did not start")

    def _reply(self) -> dict[str, Any]:
        try:
            line = self.reader.readline()
        except OSError as exc:
            raise TemplateFailed(f"the kernel template did not answer: {exc}") from None
        if not line:
            raise TemplateFailed(f"the kernel template exited (code {self.proc.poll()})")
        return json.loads(line)

    def fork(self, args: list[str], env: dict[str, str], cwd: str) -> int:
        self.sock.sendall((json.dumps({"args": args, "env": env, "cwd": cwd}) + "\n").encode())
        reply = self._reply()
        if "pid" not in reply:
            raise TemplateFailed(reply.get("error", "the kernel template refused"))
        return int(reply["pid"])

    def close(self) -> None:
        self.reader.close()
        self.sock.close()  # the template exits when its socket closes
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _key(env: dict[str, str]) -> tuple:
    return sys.executable, tuple(sorted(env.items()))


_lock = threading.Lock()  # a Dask worker runs trials in threads: one template, forks one at a time
_template: _Template | None = None


def _close_template() -> None:
    global _template
    if _template is not None:
        _template.close()
        _template = None


atexit.register(_close_template)


def fork_kernel(args: list[str], env: dict[str, str], cwd: str) -> int:
    """A new kernel's pid, forked from this process's template (started, or replaced when ``env`` is not
    the one it was started with)."""
    global _template
    with _lock:
        if _template is not None and (_template.key != _key(env) or _template.proc.poll() is not None):
            _close_template()
        if _template is None:
            _template = _Template(env)
        try:
            return _template.fork(args, env, cwd)
        except (TemplateFailed, OSError):
            _close_template()
            raise


class ForkedKernel:
    """The ``Popen`` face jupyter_client's local provisioner expects, for a kernel that is the
    template's child, not ours: a pidfd makes signals and the exit check safe against pid reuse.
    The exit status belongs to the template (which lets the system reap it), so an exited kernel
    reads as 0."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None
        self.fd: int | None = os.pidfd_open(pid)

    def poll(self) -> int | None:
        if self.returncode is None and self.fd is not None and select.select([self.fd], [], [], 0)[0]:
            os.close(self.fd)
            self.fd, self.returncode = None, 0
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.fd is not None:
            select.select([self.fd], [], [], timeout)
        if self.poll() is None:
            raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout or 0)
        return 0

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            signal.pidfd_send_signal(self.fd, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class ForkProvisioner(LocalProvisioner):
    """Launches the workbench's kernel by forking the template; anything else, or a template that
    fails, is launched as usual."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any):
        prefix = [sys.executable, "-m", "workbench.jupyter.kernel"]
        if cmd[:3] == prefix:
            # JPY_PARENT_PID: as jupyter_client's launcher sets it
            env = {**(kwargs.get("env") or os.environ), "JPY_PARENT_PID": str(os.getpid())}
            cwd = str(kwargs.get("cwd") or os.getcwd())
            try:  # in this thread, not a passing one: the template dies with the thread that started it
                pid = fork_kernel(cmd[3:], env, cwd)
            except (TemplateFailed, OSError) as exc:
                log.warning("warm kernel unavailable (%s); starting a cold one", exc)
            else:
                self.process = ForkedKernel(pid)
                self.pid = self.pgid = pid  # the kernel runs in its own session, as a launched one does
                self.cwd = cwd
                return self.connection_info
        return await super().launch_kernel(cmd, **kwargs)

    async def wait(self) -> int | None:
        """As the local provisioner's, but woken by the kernel's exit instead of polling every 0.1 s."""
        if isinstance(self.process, ForkedKernel):
            await _exited(self.process)
        return await super().wait()


async def _exited(process: ForkedKernel) -> None:
    if process.fd is None:
        return
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(process.fd, done.set)
    try:
        await done.wait()
    finally:
        loop.remove_reader(process.fd)
    process.poll()


class WarmKernelClient(AsyncKernelClient):
    """jupyter_client's client, ready as soon as the kernel has answered on shell and on iopub.

    The stock ``wait_for_ready`` then waits 0.2 s more for iopub to fall silent, on every kernel;
    what it would drain are the status messages of the readiness request itself, which nbclient
    ignores anyway (it reads only messages whose parent is the cell it executes)."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (START_TIMEOUT_SEC if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                msg = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                pass
            else:
                if msg["msg_type"] == "kernel_info_reply":
                    try:
                        await self.iopub_channel.get_msg(timeout=0.2)
                    except Empty:
                        pass
                    else:
                        self._handle_kernel_info_reply(msg)
                        break
            if not await self.is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")
        while await self.iopub_channel.msg_ready():
            await self.iopub_channel.get_msg()


class WarmKernelManager(AsyncKernelManager):
    """nbclient's kernel manager, with the forking provisioner and its client."""

    client_class = DottedObjectName("workbench.jupyter.warm.WarmKernelClient")
    client_factory = Type(klass="workbench.jupyter.warm.WarmKernelClient")

    async def _async_pre_start_kernel(self, **kw: Any):
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", None) or str(uuid.uuid4())
            self.provisioner = ForkProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        """Woken by a forked kernel's exit rather than polling for it (shutdown would wait up to 0.1 s)."""
        process = getattr(self.provisioner, "process", None)
        if isinstance(process, ForkedKernel):
            await _exited(process)
        else:
            await super()._async_wait(pollinterval)
