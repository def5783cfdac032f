"""Whose fault is a failed check: the submission's (the leaf scores 0) or the workbench's (withheld).

The submission controls every byte a check reads, so an exception raised while a check or the hidden
evaluator reads its evidence (a 400-digit number, JSON nested 100 000 deep, text in a numeric column,
a limit hit while parsing) is caused by what the submission wrote: the leaf scores 0 with the reason.
Letting it become "withheld" would let a failing submission vanish from every mean.

Only faults no evidence can cause are withheld: a malformed rubric check (:class:`CheckSpecError`),
code that does not even run (a name, import or syntax error in ``tests/checks.py`` or the evaluator),
and failures of the workbench, its sandbox or an endpoint (:class:`InfrastructureFault`; task code
raises it, or for an evaluator a class of its own by that name, when its environment fails: a licence
server, a missing device). Anything else a check raises on the submission's files, whatever its type
(a curve fit that does not converge raises RuntimeError), is the submission's failure: defaulting the
other way would let a submission hide by making a check crash. A check whose
logic has a data-dependent bug looks like a submission fault here; ``workbench task validate`` runs
every check over the reference, calibration and cheat submissions, which is where such bugs surface.
"""

from __future__ import annotations

import traceback

from ..errors import WorkbenchError
from .checks import CheckSpecError


class InfrastructureFault(WorkbenchError):
    """The workbench, its environment or an endpoint failed while scoring: the leaf is withheld."""


# exception types that no file content can cause: the rubric's or the task code's own defects
CODE_FAULTS: tuple[type[BaseException], ...] = (CheckSpecError, InfrastructureFault, NameError, ImportError,
                                                SyntaxError, NotImplementedError)
# an evaluator runs in the task's own environment, without the workbench: it signals a fault of its
# environment by raising an exception class of its own named InfrastructureFault
CODE_FAULT_NAMES = frozenset(t.__name__ for t in CODE_FAULTS) | {"ModuleNotFoundError", "IndentationError",
                                                                 "UnboundLocalError", "TabError"}


def caused_by_submission(exc: BaseException) -> bool:
    """True when ``exc``, raised while reading a submission's evidence, is the submission's failure."""
    return not isinstance(exc, CODE_FAULTS)


def name_is_code_fault(exc_type: str) -> bool:
    """The same rule for an exception known only by its type name (raised in another process)."""
    return exc_type in CODE_FAULT_NAMES


def describe(exc: BaseException, limit: int = 300) -> str:
    """One line for a rationale: the exception's type and (truncated) message."""
    text = "".join(traceback.format_exception_only(exc)).strip().replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."
