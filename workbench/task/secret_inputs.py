"""The values of a task's varied inputs (``[metadata.replay.secret_inputs]``): published and secret.

The public replay gets the file the task publishes; the secret replay gets what the task's private
``tests/secret_inputs.py`` draws::

    # tests/secret_inputs.py (PRIVATE; the standard library only)
    def draw(rng):                      # rng: random.Random seeded from the OS's secrets
        n = rng.randint(9, 15)
        return {"R_bohr": sorted(round(rng.uniform(1.0, 3.0), 4) for _ in range(n))}

A dict is written as JSON, a string as it is. The draw runs in the workbench's process (task code, like
the rest of tests/, is trusted; it never sees the submission) and is never derived from anything the
submission controls.
"""

from __future__ import annotations

import importlib.util
import json
import random
import secrets

from ..errors import WorkbenchError

MAX_INPUT_BYTES = 1 << 20


def published_inputs(task) -> bytes | None:
    """The first (public) replay's file, or ``None`` when the task varies no inputs."""
    spec = task.config.replay.secret_inputs
    if spec is None:
        return None
    p = task.root / spec.published
    if not p.is_file():
        raise WorkbenchError(f"{task.id}: secret_inputs.published {spec.published!r} is not a file of the task")
    return p.read_bytes()


def _encode(value) -> bytes:
    if isinstance(value, dict | list):
        return (json.dumps(value, indent=2) + "\n").encode()
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    raise TypeError(f"draw() returned {type(value).__name__}; a dict, list or str is expected")


def draw_inputs(task, rng: random.Random | None = None) -> bytes:
    """A fresh secret file for the task's second replay (``rng``: for tests; by default seeded from the OS).

    Raises:
        WorkbenchError: the task has no tests/secret_inputs.py, or its ``draw`` fails or returns too much.
    """
    path = task.paths.secret_inputs_py
    if not path.is_file():
        raise WorkbenchError(f"{task.id}: [metadata.replay.secret_inputs] needs {path}")
    spec = importlib.util.spec_from_file_location(f"secret_inputs_{task.id.replace('-', '_')}", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        data = _encode(mod.draw(rng or random.Random(secrets.randbits(128))))
    except Exception as exc:  # the task's own code: its author's fault, never the submission's
        raise WorkbenchError(f"{path}: draw() failed: {type(exc).__name__}: {exc}") from exc
    if len(data) > MAX_INPUT_BYTES:
        raise WorkbenchError(f"{path}: draw() returned {len(data)} bytes (at most {MAX_INPUT_BYTES})")
    return data
