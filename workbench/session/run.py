"""Stage 1, agent session: the agent works in a sandboxed copy of the starter; we record what it delivered.

The delivery probe classifies the result as ``absent`` (no reproduce.sh), ``starter_only`` (identical
to the starter) or ``delivered``; the agent's own outcome (completed, refused, timeout,
budget_exhausted, agent_error) is recorded beside it with the session's network policy and budget.
Failures of the infrastructure (model endpoint, sandbox, environment) propagate and make the trial an
``infra_error``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..agents import Budget, PublicTask, Trajectory, get_agent
from ..agents.workspace import Workspace
from ..batch.matrix import AgentConfig
from ..io import atomic_write_json, copy_tree, digest_of, remove_tree, tree_hashes
from ..paths import TrialPaths
from ..sandbox import host
from ..sandbox.environments import environment_for
from ..task import Task
from .ledger import Delivery, SessionUsage

log = logging.getLogger(__name__)


def probe_delivery(submission: Path, starter: Path) -> tuple[str, int, str, str | None]:
    sub = tree_hashes(submission) if submission.is_dir() else {}
    start = tree_hashes(starter) if starter.is_dir() else None
    if "reproduce.sh" not in sub:
        status = "absent"
    elif start is not None and sub == start:
        status = "starter_only"
    else:
        status = "delivered"
    return status, len(sub), digest_of(sub), digest_of(start) if start is not None else None


def budget_for(config: AgentConfig, view: PublicTask) -> Budget:
    p = config.prices
    return Budget(wall_sec=view.timeout_sec * config.time_scale, max_turns=config.max_turns,
                  max_tokens=config.max_tokens, max_cost_usd=config.max_cost_usd,
                  input_per_mtok=p.input_per_mtok if p else None, output_per_mtok=p.output_per_mtok if p else None)


def wants_scoring_service(task: Task, config: AgentConfig) -> bool:
    """The hidden scoring service is on for ``sota`` and ``discovery`` tasks (a discovery agent works by
    submitting to it) unless the configuration says otherwise (``options.scoring_service``); privileged
    agents never need it."""
    opt = config.options.get("scoring_service")
    return bool(opt) if opt is not None else task.scoring in ("sota", "discovery")


def run_session(task: Task, config: AgentConfig | dict[str, Any], trial_dir: Path, sandbox: str = "bwrap",
                *, view: PublicTask | None = None, start: Path | None = None) -> Delivery:
    """Run one agent session on ``task`` into ``trial_dir``'s session/.

    Args:
        task: the task; its starter is the working copy unless ``start`` is given.
        config: the agent configuration.
        trial_dir: the trial directory (session/ is written under it).
        sandbox: ``bwrap`` or ``docker``.
        view: what the agent is shown (default: the task's public contract); a discovery controller gives a
            phase's goal and a read-only context.
        start: the working copy to begin from instead of the starter (a discovery session's workspace).

    Returns:
        The :class:`Delivery` written to session/delivery.json: what the agent delivered and how it ended.
    """
    config = AgentConfig.model_validate(config)
    host.require(task)  # before any work: a host short of the task's resources, a GPU task on the CPU
    tp = TrialPaths(Path(trial_dir))
    agent = get_agent(config.agent, model=config.model, options=config.options)
    remove_tree(tp.session)
    tp.session.mkdir(parents=True)
    first = start if start is not None else task.paths.starter
    if first.is_dir():
        copy_tree(first, tp.submission)
    else:
        tp.submission.mkdir()
    view = view or PublicTask.of(task)
    budget = budget_for(config, view)
    network = config.network or agent.default_network
    environment, image = environment_for(task, sandbox)
    trajectory = Trajectory(tp.trajectory, budget)
    service = None
    with Workspace(view, tp.submission, env_dir=environment["dir"], network=network, sandbox=sandbox,
                   image=image) as ws:
        ws.inbox = tp.inbox
        ws.gpus.owner = f"the session of trial {tp.root.name}"
        if view.gpus and not agent.leases_gpus:  # it cannot ask: it holds them for the whole session
            ws.acquire_gpus()
        if wants_scoring_service(task, config):
            from .scoring_service import ScoringService

            service = ScoringService(task, ws.snapshot, tp, pause=budget.paused,
                                     timeout=task.config.replay.timeout_sec, sandbox=sandbox, owner=ws.owner,
                                     gpus=ws.gpus)
            ws.attach_scoring(service.start(), service.token)
        try:
            result = agent.run(view, ws, budget, trajectory, task if agent.privileged else None)
        finally:
            if service is not None:
                service.stop()
            ws.release_gpus()
    if ws.gpus.records:
        result.details["gpu_leases"] = ws.gpus.records
    if service is not None:
        result.details["scoring_service"] = service.summary()
    wall = budget.elapsed()
    status, files, sub_digest, starter_digest = probe_delivery(tp.submission, task.paths.starter)
    tp.agent_log.write_text(f"{agent.name}: {result.status}: {result.message}\n", encoding="utf-8")
    usage = SessionUsage(**result.usage.as_dict(), wall_sec=round(wall, 3), **result.details)
    atomic_write_json(tp.usage, usage.model_dump())
    delivery = Delivery(status=status, agent=agent.name, model=config.model, agent_status=result.status,
                        message=result.message[:4000], network=network,
                        budget={"wall_sec": budget.wall_sec, "max_turns": budget.max_turns,
                                "max_tokens": budget.max_tokens, "max_cost_usd": budget.max_cost_usd},
                        files=files, submission_digest=sub_digest, starter_digest=starter_digest,
                        wall_sec=round(wall, 3))
    atomic_write_json(tp.delivery, delivery.model_dump())
    log.info("session %s: %s %s, delivered %s (%d files)", tp.root.name, agent.name, result.status, status, files)
    return delivery
