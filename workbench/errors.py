"""Errors a user can act on.

The CLI prints these as one clear line (or one line per problem) and exits non-zero; anything else
escaping is a bug in the workbench, not in the user's input.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """A problem with the user's input or environment, stated so they can fix it."""


class ValidationProblem(WorkbenchError):
    """One or more problems in a file, each naming the file and the field."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def pydantic_problems(file: str, exc) -> list[str]:
    """Turn a pydantic ValidationError into `file: field.path: message` lines."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "<root>"
        msg = err.get("msg", "invalid")
        out.append(f"{file}: {loc}: {msg}")
    return out
