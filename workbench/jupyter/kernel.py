"""Kernel launcher for stage notebooks run by the workbench: the kernel dies with its parent.

A batch killed with SIGKILL must not leave a kernel behind that keeps writing into a trial the
resumed batch is about to re-run. ``PR_SET_PDEATHSIG`` makes the kernel get SIGKILL when the process
that started it dies (and the sandbox, started from the kernel, dies with the kernel).

``--zygote FD`` runs the warm-kernel template instead (:mod:`workbench.jupyter.warm` owns the other
side): a process that imports what stage notebooks import, once, and then only forks. Each request on
the socket FD gets a child that becomes a fresh kernel, so every notebook starts from the same
pristine, never-used interpreter: nothing a notebook defines, patches or changes (variables, module
attributes, the working directory, the environment) can reach the next one, because they never share
a process. The template itself runs no notebook code; it must hold no threads or sockets when it forks.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import signal
import socket
import sys

# What stage notebooks import (their cells, workbench.trial.displays and the stage functions), paid once per
# template instead of once per notebook. Only modules whose import does the same thing in the template
# as in a kernel: matplotlib_inline's backend, for one, configures the shell it finds at import, so it is
# left to the kernel. tests/jupyter/test_kernel_pool.py compares warm and cold stage notebooks output for output.
KERNEL_IMPORTS = ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.debugger")
WARM_IMPORTS = ("numpy", "matplotlib.figure",
                "matplotlib.backends.backend_agg", "PIL.PngImagePlugin", "pyarrow.pandas_compat", "tomllib",
                "workbench.trial.displays", "workbench.trial.stages", "workbench.scoring", "workbench.session.run",
                "workbench.replay.trial", "workbench.review", "workbench.reader.runtime")


def die_with_parent(expected_parent: int | None = None) -> None:
    """SIGKILL this process when its parent dies (Linux); exit now if the parent is already gone."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(1)


class _RoutineNotices(logging.Filter):
    """Drop messages stage kernels log routinely, which would bury real errors in batch logs:
    ipykernel 7.4's warning that loopback TCP is unencrypted (these kernels serve only the process
    that started them, messages stay HMAC-signed with a key in a 0600 connection file, and the replay
    sandbox has no network), the KeyboardInterrupt jupyter_client sends at every shutdown, and the
    traceback of a reply a kernel can no longer send because it was shut down mid-cell (Ctrl-C)."""

    ROUTINE = ("running over TCP without encryption", "KeyboardInterrupt caught in kernel")

    def filter(self, record: logging.LogRecord) -> bool:
        if any(m in record.getMessage() for m in self.ROUTINE):
            return False
        exc = record.exc_info[1] if record.exc_info else None
        return not (type(exc).__name__ == "ZMQError" and getattr(exc, "errno", None) == errno.ENOTSOCK)


# Where those notices are logged: ipykernel's application, and tornado's general logger, on which pyzmq's
# ZMQStream reports an exception in its callbacks (a control reply flushed to a socket that shutdown closed).
NOISY_LOGGERS = ("IPKernelApp", "tornado.general")


def quiet_routine_notices() -> None:
    """Filter the routine notices out of every logger that carries them (a filter on a logger applies to
    the records logged on that logger, not to those of its children or parents)."""
    for name in NOISY_LOGGERS:
        logging.getLogger(name).addFilter(_RoutineNotices())


def _launch() -> None:
    quiet_routine_notices()
    from ipykernel.kernelapp import launch_new_instance

    launch_new_instance()


def main() -> None:
    if sys.argv[1:2] == ["--zygote"]:
        return serve_forks(int(sys.argv[2]))
    parent = os.environ.get("WORKBENCH_KERNEL_PARENT")
    die_with_parent(int(parent) if parent else None)
    _launch()


# --- the warm-kernel template ------------------------------------------------------------------

class _KernelShell:
    kernel = "the template imports as a kernel would"


def _warm_up() -> dict[str, str]:
    """Import what stage kernels need; returns the environment variables the imports set (debugpy sets
    one), which a kernel importing them itself would have."""
    import builtins
    import importlib

    # as ipykernel sets it before the kernel's first import of matplotlib, so the backend is the same
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    # debugpy (ipykernel's debugger) warns at import, on the template's stderr, about frozen modules
    before = dict(os.environ)
    quieted = "PYDEVD_DISABLE_FILE_VALIDATION" not in os.environ
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # pandas settles display.max_columns at import: 20 under a Jupyter kernel (a shell with a kernel),
    # the terminal's width elsewhere
    # (after the kernel's own modules, as in a kernel: the warning filters each adds stay in its order)
    for name in KERNEL_IMPORTS:
        importlib.import_module(name)
    builtins.get_ipython = _KernelShell  # type: ignore[attr-defined]
    try:
        importlib.import_module("pandas")
    finally:
        del builtins.get_ipython  # type: ignore[attr-defined]
    for name in WARM_IMPORTS:
        importlib.import_module(name)
    if quieted:
        del os.environ["PYDEVD_DISABLE_FILE_VALIDATION"]
    return {k: v for k, v in os.environ.items() if before.get(k) != v}


def _become_kernel(request: dict, ready_fd: int) -> None:
    """In the forked child: a new session, death with the template, the request's environment (plus
    what the template's imports set), working directory and arguments; then the kernel, as ``python -m
    workbench.jupyter.kernel`` would run."""
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    die_with_parent(int(request["template"]))
    os.write(ready_fd, b"k")
    os.close(ready_fd)
    r, _ = os.pipe()  # stdin: a pipe nobody writes to, as jupyter_client gives a kernel it launches
    os.dup2(r, 0)
    os.close(r)
    os.environ.clear()
    os.environ.update(request["env"])
    for name, value in request["set_by_imports"].items():
        os.environ.setdefault(name, value)
    os.chdir(request["cwd"])
    sys.argv = [__file__, *request["args"]]
    if "numpy" in sys.modules:  # the template's seed would otherwise be every kernel's
        sys.modules["numpy"].random.seed()
    _launch()


def _child(request: dict, ready_fd: int) -> None:
    """Run the kernel and exit as its interpreter would, never returning into the template's loop."""
    code = 0
    try:
        _become_kernel(request, ready_fd)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import atexit

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def serve_forks(fd: int) -> None:
    """The template's loop: one JSON request per line on socket ``fd``, answered with the new kernel's
    pid once it runs in its own session (or an error). Exits when the socket closes or the parent dies."""
    parent = os.environ.get("WORKBENCH_KERNEL_PARENT")
    die_with_parent(int(parent) if parent else None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_by_imports = _warm_up()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # kernels are reaped by the system, never zombies
    sock = socket.socket(fileno=fd)
    reader = sock.makefile("rb")
    sock.sendall(b'{"ready": true}\n')
    for line in reader:
        request = json.loads(line)
        request["template"], request["set_by_imports"] = os.getpid(), set_by_imports
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            reader.close()
            sock.close()
            os.close(r)
            _child(request, w)
        os.close(w)
        ok = os.read(r, 1) == b"k"
        os.close(r)
        sock.sendall((json.dumps({"pid": pid} if ok else {"error": "the forked kernel died at start"})
                      + "\n").encode())


if __name__ == "__main__":
    main()
