"""Agents: one registry, name -> class."""

from __future__ import annotations

from ..errors import WorkbenchError
from .base import Agent, AgentResult, Budget, TaskView, Trajectory
from .nop import NopAgent
from .oracle import OracleAgent

AGENTS: dict[str, type] = {"oracle": OracleAgent, "nop": NopAgent}


def get_agent(name: str) -> Agent:
    try:
        return AGENTS[name]()
    except KeyError:
        raise WorkbenchError(f"unknown agent {name!r}; known: {', '.join(sorted(AGENTS))}") from None


__all__ = ["AGENTS", "Agent", "AgentResult", "Budget", "NopAgent", "OracleAgent", "TaskView", "Trajectory",
           "get_agent"]
