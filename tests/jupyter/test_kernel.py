"""The stage kernel's launcher: routine log lines are dropped, real errors are not."""

from __future__ import annotations

import errno
import logging

import zmq

from workbench.jupyter.kernel import _RoutineNotices


def _record(message: str, exc: BaseException | None = None) -> logging.LogRecord:
    info = (type(exc), exc, None) if exc else None
    return logging.LogRecord("IPKernelApp", logging.ERROR, __file__, 1, message, None, info)


def test_routine_notices_are_dropped_and_real_errors_kept():
    keep = _RoutineNotices().filter
    assert not keep(_record("Kernel is running over TCP without encryption. All communication ..."))
    assert not keep(_record("KeyboardInterrupt caught in kernel"))
    # a reply the kernel cannot send any more: it was shut down mid-cell (Ctrl-C)
    assert not keep(_record("Exception in message handler:", zmq.ZMQError(errno.ENOTSOCK)))
    assert keep(_record("Exception in message handler:", zmq.ZMQError(errno.EAGAIN)))
    assert keep(_record("Exception in message handler:", ValueError("a stage failed")))
    assert keep(_record("something else went wrong"))
