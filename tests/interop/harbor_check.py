"""Run by the peers' interpreter (.ci/peers), not by the suite's: Harbor's own TrajectoryValidator over ATIF
files, and Harbor's TaskConfig over task.toml files. Prints {path: [errors]} as JSON (no errors: valid).

    python harbor_check.py trajectory FILE...
    python harbor_check.py task-config FILE...
    python harbor_check.py task-keys         (the keys TaskConfig's tables accept, by table)
"""

import json
import sys
from pathlib import Path


def trajectories(paths):
    from harbor.utils.trajectory_validator import TrajectoryValidator

    out = {}
    for p in paths:
        v = TrajectoryValidator()
        out[p] = [] if v.validate(Path(p)) else list(v.errors)
    return out


def task_configs(paths):
    """Each task.toml through TaskConfig, with the keys it kept (TaskConfig ignores keys it does not know)."""
    from harbor.models.task.config import TaskConfig

    out = {}
    for p in paths:
        try:
            cfg = TaskConfig.model_validate_toml(Path(p).read_text())
            out[p] = {"errors": [], "kept": cfg.model_dump(mode="json", exclude_unset=True)}
        except Exception as exc:  # a peer's verdict, whatever its type
            out[p] = {"errors": [f"{type(exc).__name__}: {exc}"], "kept": {}}
    return out


def task_keys(_paths):
    """{table ("" for the top level): the keys TaskConfig's model accepts there}."""
    from harbor.models.task.config import AgentConfig, EnvironmentConfig, PackageInfo, TaskConfig, VerifierConfig

    models = {"": TaskConfig, "task": PackageInfo, "agent": AgentConfig, "verifier": VerifierConfig,
              "environment": EnvironmentConfig}
    return {t: sorted(f.alias or n for n, f in m.model_fields.items()) for t, m in models.items()}


if __name__ == "__main__":
    kind, files = sys.argv[1], sys.argv[2:]
    print(json.dumps({"trajectory": trajectories, "task-config": task_configs, "task-keys": task_keys}[kind](files)))
