"""Sandboxes: one registry, name -> backend class."""

from __future__ import annotations

from ..errors import lookup
from .base import Limits, Mount, Sandbox, SandboxResult, SandboxSetupError, SandboxSpec
from .bwrap import BwrapSandbox
from .docker.sandbox import DockerSandbox

SANDBOXES: dict[str, type] = {"bwrap": BwrapSandbox, "docker": DockerSandbox}


def get_sandbox(name: str = "bwrap") -> Sandbox:
    cls = lookup(SANDBOXES, "sandbox", name)
    return cls()


__all__ = ["SANDBOXES", "BwrapSandbox", "DockerSandbox", "Limits", "Mount", "Sandbox", "SandboxResult",
           "SandboxSetupError",
           "SandboxSpec", "get_sandbox"]
