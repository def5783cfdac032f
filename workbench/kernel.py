"""Kernel launcher for stage notebooks run by the workbench: the kernel dies with its parent.

A batch killed with SIGKILL must not leave a kernel behind that keeps writing into a trial the
resumed batch is about to re-run. ``PR_SET_PDEATHSIG`` makes the kernel get SIGKILL when the process
that started it dies (and the sandbox, started from the kernel, dies with the kernel).
"""

from __future__ import annotations

import logging
import os
import signal
import sys


def die_with_parent(expected_parent: int | None = None) -> None:
    """SIGKILL this process when its parent dies (Linux); exit now if the parent is already gone."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(1)


class _RoutineNotices(logging.Filter):
    """Drop two messages every stage kernel logs, which would bury real errors in batch logs:
    ipykernel 7.4's warning that loopback TCP is unencrypted (these kernels serve only the process
    that started them, messages stay HMAC-signed with a key in a 0600 connection file, and the replay
    sandbox has no network), and the KeyboardInterrupt jupyter_client sends at every shutdown."""

    ROUTINE = ("running over TCP without encryption", "KeyboardInterrupt caught in kernel")

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(m in record.getMessage() for m in self.ROUTINE)


def main() -> None:
    parent = os.environ.get("WORKBENCH_KERNEL_PARENT")
    die_with_parent(int(parent) if parent else None)
    logging.getLogger("IPKernelApp").addFilter(_RoutineNotices())
    from ipykernel.kernelapp import launch_new_instance

    launch_new_instance()


if __name__ == "__main__":
    main()
