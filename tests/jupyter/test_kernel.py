"""The stage kernel's launcher: routine log lines are dropped, real errors are not."""

from __future__ import annotations

import errno
import logging

import zmq

from workbench.jupyter.kernel import _RoutineNotices


def _record(message: str, exc: BaseException | None = None, logger: str = "IPKernelApp") -> logging.LogRecord:
    info = (type(exc), exc, None) if exc else None
    return logging.LogRecord(logger, logging.ERROR, __file__, 1, message, None, info)


def test_routine_notices_are_dropped_and_real_errors_kept():
    keep = _RoutineNotices().filter
    assert not keep(_record("Kernel is running over TCP without encryption. All communication ..."))
    assert not keep(_record("KeyboardInterrupt caught in kernel"))
    # a reply the kernel cannot send any more: it was shut down mid-cell (Ctrl-C)
    assert not keep(_record("Exception in message handler:", zmq.ZMQError(errno.ENOTSOCK)))
    assert keep(_record("Exception in message handler:", zmq.ZMQError(errno.EAGAIN)))
    assert keep(_record("Exception in message handler:", ValueError("a stage failed")))
    assert keep(_record("something else went wrong"))


def test_a_reply_to_a_closed_socket_is_dropped_on_every_logger_that_reports_it():
    """pyzmq's ZMQStream reports the same shutdown race on tornado's logger, not ipykernel's: on CI it
    printed a traceback into a Ctrl-C'd run's terminal (and failed its 'no Traceback' check). Asked of the
    loggers' own filters, which is what decides before any handler (or another test's logging set-up) sees it."""
    from workbench.jupyter.kernel import NOISY_LOGGERS, quiet_routine_notices

    quiet_routine_notices()
    for name in NOISY_LOGGERS:
        logger = logging.getLogger(name)
        assert not logger.filter(_record("Uncaught exception in ZMQStream callback", zmq.ZMQError(errno.ENOTSOCK),
                                         name)), name
        assert logger.filter(_record("a real error", logger=name)), name
