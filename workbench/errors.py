"""Errors a user can act on.

The CLI prints these as one clear line (or one line per problem) and exits non-zero; anything else
escaping is a bug in the workbench, not in the user's input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

T = TypeVar("T")


class WorkbenchError(Exception):
    """A problem with the user's input or environment, stated so they can fix it."""


class ValidationProblem(WorkbenchError):
    """One or more problems in a file, each naming the file and the field."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class UnknownKeys(ValueError):
    """Keys a strict table does not know, each with the closest known key (or None); raised by a model's
    validator, reported by :func:`pydantic_problems` one line per key, at the key's own field path."""

    def __init__(self, keys: list[tuple[str, str | None]], hint: str = ""):
        self.keys, self.hint = keys, hint
        super().__init__("; ".join(f"unknown key {k!r}" + (f" (did you mean {c}?)" if c else "") for k, c in keys)
                         + (f"; {hint}" if hint else ""))


def pydantic_problems(file: str, exc) -> list[str]:
    """Turn a pydantic ValidationError into `file: field.path: message` lines."""
    import json
    import re

    def part(p) -> str:  # a key that could be mistaken for punctuation is quoted
        return str(p) if re.fullmatch(r"[A-Za-z0-9_\-]+", str(p)) else json.dumps(str(p))

    out = []
    for err in exc.errors():
        loc = ".".join(part(p) for p in err.get("loc", ()))
        unknown = (err.get("ctx") or {}).get("error")
        if isinstance(unknown, UnknownKeys):
            for key, close in unknown.keys:
                out.append(f"{file}: {'.'.join(filter(None, (loc, part(key))))}: unknown key"
                           + (f" (did you mean {close}?)" if close else "")
                           + (f"; {unknown.hint}" if unknown.hint else ""))
            continue
        msg = err.get("msg", "invalid")
        if err.get("type") == "value_error":  # our own validators' messages, without pydantic's prefix
            msg = msg.removeprefix("Value error, ")
        out.append(f"{file}: {loc}: {msg}" if loc else f"{file}: {msg}")
    return out


def load_toml_model(path, model):
    """Parse a TOML file into a pydantic model; every problem names the file (and the field)."""
    import tomllib

    return _load_model(path, model, tomllib.loads, (tomllib.TOMLDecodeError,), "TOML")


def load_json_model(path, model):
    """Parse a JSON file into a pydantic model; every problem names the file (and the field)."""
    import json

    return _load_model(path, model, json.loads, (json.JSONDecodeError,), "JSON")


def _load_model(path, model, parse, syntax_errors: tuple, kind: str):
    from pathlib import Path

    from pydantic import ValidationError

    path = Path(path)
    if not path.is_file():
        raise ValidationProblem([f"{path}: file not found"])
    try:
        data = parse(path.read_text(encoding="utf-8"))
    except (*syntax_errors, UnicodeDecodeError) as exc:
        raise ValidationProblem([f"{path}: not valid {kind}: {exc}"]) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValidationProblem(pydantic_problems(str(path), exc)) from None


def unknown(kind: str, name: object, known: Iterable[str]) -> str:
    """The one wording of every registry's refusal: ``unknown KIND 'name'; known: a, b, c``."""
    return f"unknown {kind} {name!r}; known: {', '.join(sorted(known))}"


def lookup(registry: Mapping[str, T], kind: str, name: str, error: type[Exception] = WorkbenchError) -> T:
    """``registry[name]``, or ``error`` in the one wording of :func:`unknown` (every name -> class registry
    of the workbench goes through here: agents, sandboxes, executors, engines, scoring modes, importers).

    Args:
        registry: name -> what it names.
        kind: what a name names, in the message (``agent``, ``sandbox``, ...).
        name: the name asked for.
        error: the exception to raise (a pydantic validator needs ValueError).

    Returns:
        What ``name`` names.
    """
    try:
        return registry[name]
    except (KeyError, TypeError):
        raise error(unknown(kind, name, registry)) from None
