"""Agents: one registry, name -> class."""

from __future__ import annotations

from typing import Any

from ..errors import lookup
from .base import Agent, AgentResult, AgentStartError, BaseAgent, Budget, Trajectory, Usage
from .cli_agent import CLIAgent
from .human import HumanAgent
from .nop import NopAgent
from .openai_agent import OpenAIAgent
from .oracle import OracleAgent
from .public_task import PublicTask
from .refuse import RefuseAgent
from .replay_agent import ReplayAgent

AGENTS: dict[str, type[BaseAgent]] = {"oracle": OracleAgent, "nop": NopAgent, "refuse": RefuseAgent,
                                      "openai": OpenAIAgent, "cli": CLIAgent, "replay": ReplayAgent,
                                      "human": HumanAgent}


def get_agent(name: str, model: str | None = None, options: dict[str, Any] | None = None) -> Agent:
    cls = lookup(AGENTS, "agent", name)
    return cls(model=model, options=options)


def check_environments(configs) -> None:
    """Before any work starts: every configuration's agent can start here (else one line naming it)."""
    for c in configs:
        try:
            AGENTS[c.agent].check_environment(c.model, c.options)
        except AgentStartError as exc:
            raise AgentStartError(f"configuration {c.name!r}: {exc}") from None


__all__ = ["AGENTS", "Agent", "AgentResult", "AgentStartError", "BaseAgent", "Budget", "CLIAgent", "HumanAgent",
           "NopAgent",
           "OpenAIAgent", "OracleAgent", "RefuseAgent", "ReplayAgent", "PublicTask", "Trajectory", "Usage",
           "check_environments", "get_agent"]
