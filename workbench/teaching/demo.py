"""`workbench demo`: the bundled H2 task with the oracle and nop agents, through `workbench run`'s own path.

A demo run is an ordinary run folder. Running the demo again replaces its two trials, nothing else: the
folder's results store keeps its expert reviews, and a review still applies when the new evidence is the
evidence it judged (the oracle's PySCF curve is deterministic). A folder the user made for something else
is refused, never touched.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..batch.matrix import AgentConfig
from ..io import claim_folder
from ..sandbox.environments import install_env
from ..task import load_task
from ..trial.pipeline import run_single
from ..trial.record import TrialRecord

DEMO_TASK = Path(__file__).resolve().parents[2] / "tasks" / "h2-pes"
AGENTS = ("oracle", "nop")


def run_demo(out: Path, *, engine: str = "papermill", judge: dict[str, Any] | None = None,
             say: Callable[[str], None] | None = None) -> list[TrialRecord]:
    """The demo's trials (one per agent of :data:`AGENTS`), each replacing the demo's earlier one."""
    claim_folder(out)  # a run folder is added to, a user's folder refused
    task = load_task(DEMO_TASK)
    install_env(task, say=say)
    return [run_single(task, AgentConfig(name=agent, agent=agent), out, replace=True, say=say, engine=engine,
                       judge=judge)
            for agent in tqdm(AGENTS, desc="demo trials", unit="trial", file=sys.stderr)]
