"""Our interop formats checked by the peers' own code (Harbor's models, Inspect AI's log reader and viewer),
each run in its own interpreter (.ci/peers builds them)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

CHECK = Path(__file__).with_name("harbor_check.py")
PEERS_PYTHON = Path(os.environ.get("WORKBENCH_PEERS_PYTHON",
                                   "/var/cache/workbench/peers/harbor-0.25.0/bin/python"))
INSPECT_CHECK = Path(__file__).with_name("inspect_check.py")
INSPECT_PYTHON = Path(os.environ.get("WORKBENCH_INSPECT_PYTHON",
                                     "/var/cache/workbench/peers/inspect-ai-0.3.285/bin/python"))


def peers_available() -> bool:
    return PEERS_PYTHON.is_file()


def harbor(kind: str, paths: list[Path]) -> dict:
    """Harbor's verdict on each file: ``kind`` is trajectory or task-config (see harbor_check.py)."""
    if not paths and kind != "task-keys":
        return {}
    proc = subprocess.run([str(PEERS_PYTHON), str(CHECK), kind, *map(str, paths)], capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"harbor_check.py failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def inspect_available() -> bool:
    return INSPECT_PYTHON.is_file()


def inspect_reads(log_dir: Path) -> dict:
    """What Inspect AI's own reader makes of every log in ``log_dir`` (see inspect_check.py)."""
    proc = subprocess.run([str(INSPECT_PYTHON), str(INSPECT_CHECK), str(log_dir)], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"inspect_check.py failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)
