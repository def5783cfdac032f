"""Agents: one registry, name -> class."""

from __future__ import annotations

from typing import Any

from ..errors import WorkbenchError
from .base import Agent, AgentResult, BaseAgent, Budget, TaskView, Trajectory
from .nop import NopAgent
from .oracle import OracleAgent
from .refuse import RefuseAgent

AGENTS: dict[str, type[BaseAgent]] = {"oracle": OracleAgent, "nop": NopAgent, "refuse": RefuseAgent}


def get_agent(name: str, model: str | None = None, options: dict[str, Any] | None = None) -> Agent:
    try:
        cls = AGENTS[name]
    except KeyError:
        raise WorkbenchError(f"unknown agent {name!r}; known: {', '.join(sorted(AGENTS))}") from None
    return cls(model=model, options=options)


__all__ = ["AGENTS", "Agent", "AgentResult", "BaseAgent", "Budget", "NopAgent", "OracleAgent", "RefuseAgent",
           "TaskView", "Trajectory", "get_agent"]
