"""What every importer shares: the report of what was and was not carried over, the destination, and the
task.toml, install.sh and replay outputs an imported package is written with."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import WorkbenchError


@dataclass
class ImportReport:
    source: str
    src: Path
    dest: Path
    carried: list[str] = field(default_factory=list)
    not_carried: list[str] = field(default_factory=list)

    def carry(self, what: str) -> None:
        self.carried.append(what)

    def drop(self, what: str) -> None:
        self.not_carried.append(what)

    def markdown(self) -> str:
        lines = [f"# Imported from {self.source}", "", f"Source: `{self.src}`", "", "## Carried over", ""]
        lines += [f"- {c}" for c in self.carried] or ["- (nothing)"]
        lines += ["", "## Not carried over (to do by hand)", ""]
        lines += [f"- {d}" for d in self.not_carried] or ["- (nothing)"]
        return "\n".join(lines) + "\n"


def prepare_dest(dest: Path, force: bool = False) -> None:
    if dest.exists() and any(dest.iterdir()):
        if not force:
            raise WorkbenchError(f"{dest}: exists and is not empty (use --force to replace it)")
        shutil.rmtree(dest)
    dest.mkdir(parents=True, exist_ok=True)


def write_toml_task(dest: Path, *, name: str, description: str | None = None, metadata: dict | None = None,
                    agent_timeout: float | None = None, environment: dict | None = None,
                    replay_outputs: list[str] | None = None) -> None:
    """A task.toml in the workbench's schema (values quoted with json, which TOML strings accept)."""
    def table(title: str, values: dict) -> list[str]:
        rows = [f"{k} = {json.dumps(v)}" for k, v in values.items() if v is not None]
        return [f"[{title}]", *rows, ""] if rows else []

    lines = ['schema_version = "1.1"', ""]
    lines += table("task", {"name": name, "version": "1.0", "description": description})
    lines += table("metadata", metadata or {})
    lines += table("agent", {"timeout_sec": agent_timeout})
    lines += table("environment", environment or {})
    lines += table("metadata.replay", {"outputs": replay_outputs or ["results"]})
    (dest / "task.toml").write_text("\n".join(lines), encoding="utf-8")


def derive_replay_outputs(dest: Path, rep: ImportReport) -> list[str]:
    """``[metadata.replay] outputs`` of an imported package: the top-level directories its rubric reads that are not
    sources (:mod:`workbench.task.outputs`); ``["results"]``, said in the report, when the rubric names none."""
    from ...paths import TaskPaths
    from ...rubric import load_rubric
    from ..outputs import derive_outputs, describe, evidence_reads, package_sources

    paths = TaskPaths(dest)
    reads = evidence_reads(load_rubric(paths.rubric)) if paths.rubric.is_file() else []
    sources = package_sources(paths, reads)
    roots, unusable = derive_outputs(reads, sources)
    first: dict[str, object] = {}
    for r in unusable:
        first.setdefault(r.path, r)
    for r in first.values():
        rep.drop(f"{describe(r, 'tests/rubric.json')}: names no output directory (a glob or a top-level file "
                 "outside the sources), so the replay does not regenerate it: put it under an output root")
    if roots:
        rep.carry(f"[metadata.replay] outputs = {json.dumps(roots)}: the top-level directories the rubric reads, "
                  f"less the sources ({', '.join(sorted(sources))})")
        return roots
    rep.drop('[metadata.replay] outputs = ["results"]: the rubric reads no output directory to derive them from; check '
             "which roots the submission generates")
    return ["results"]


GENERIC_INSTALL = """#!/usr/bin/env bash
# Generic environment written by `workbench task import`: a venv from Debian's /usr/bin/python3 with
# numpy, scipy and pandas. Add the task's own pinned dependencies before validating it.
set -euo pipefail
: "${WORKBENCH_ENV:?WORKBENCH_ENV must name the directory to install into}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
/usr/bin/python3 -m venv "$WORKBENCH_ENV"
"$WORKBENCH_ENV/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check numpy scipy pandas
if [ -d "$here/data" ]; then cp -a "$here/data" "$WORKBENCH_ENV/data"; fi  # public task data, read-only in sandboxes
"""


def write_generic_install(dest: Path, rep: ImportReport) -> None:
    sh = dest / "environment" / "install.sh"
    sh.parent.mkdir(parents=True, exist_ok=True)
    sh.write_text(GENERIC_INSTALL, encoding="utf-8")
    sh.chmod(0o755)
    rep.drop("environment/install.sh is generic (python, numpy, scipy, pandas, unpinned): add and pin the task's "
             "dependencies")
