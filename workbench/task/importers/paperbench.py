"""OpenAI PaperBench: a rubric.json (TaskNode tree), or a paper directory holding one with paper.md /
addendum.md. PaperBench has no environment, replay contract, solution or calibration: those are listed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ...errors import WorkbenchError
from ...rubric.tree import parse_rubric
from .common import ImportReport, derive_replay_outputs, write_generic_install, write_toml_task

GRADED_KEYS = ("score", "valid_score", "explanation", "judge_metadata")


def _strip_grades(node: dict) -> int:
    """Remove a graded tree's scores (they are one submission's grades, not the rubric); count them."""
    n = sum(1 for k in GRADED_KEYS if node.pop(k, None) is not None)
    return n + sum(_strip_grades(c) for c in node.get("sub_tasks") or [])


def import_paperbench(src: Path, dest: Path) -> ImportReport:
    rep = ImportReport("paperbench", src, dest)
    rubric_file = src if src.is_file() else src / "rubric.json"
    if not rubric_file.is_file():
        raise WorkbenchError(f"{src}: no rubric.json")
    data = json.loads(rubric_file.read_text(encoding="utf-8"))
    if isinstance(data, dict) and "rubric" in data and "sub_tasks" not in data:  # a graded result file
        data = data["rubric"]
    graded = _strip_grades(data)
    rubric = parse_rubric(data, str(rubric_file))  # PaperBench categories map to the three phases
    name = src.stem if src.is_file() else src.name
    (dest / "tests").mkdir()
    (dest / "tests" / "rubric.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    rep.carry(f"tests/rubric.json: {len(rubric.leaves)} leaves (Code Development → modeling, Code Execution → "
              "execution, Result Analysis → validation); every leaf is judge-scored")
    if graded:
        rep.drop(f"{graded} grade field(s) (score/valid_score/explanation) of a graded tree: one submission's "
                 "grades, not part of the rubric; use `workbench judge-eval` to compare a judge with them")
    paper = dest / "environment" / "paper"
    paper.mkdir(parents=True)
    found = False
    for f in ("paper.md", "addendum.md", "blacklist.txt"):
        if src.is_dir() and (src / f).is_file():
            shutil.copy2(src / f, paper / f)
            rep.carry(f"environment/paper/{f}")
            found = found or f == "paper.md"
    if not found:
        (paper / "paper.md").write_text(f"# {name}\n\n(The paper was not part of the import.)\n", encoding="utf-8")
        rep.drop("the paper: PaperBench ships it separately; put it in environment/paper/paper.md")
    (dest / "instruction.md").write_text(
        f"# Reproduce {name}\n\nReproduce the paper in environment/paper/ (see addendum.md when present). "
        "Deliver `reproduce.sh` that regenerates every result under `results/` in a clean sandbox with no network.\n",
        encoding="utf-8")
    rep.drop("instruction.md is a generic placeholder: write the public task contract (targets, observables, "
             "deliverables)")
    starter = dest / "environment" / "starter_submission"
    starter.mkdir()
    (starter / "reproduce.sh").write_text("#!/usr/bin/env bash\necho 'not implemented' >&2\nexit 1\n")
    write_toml_task(dest, name=f"paperbench/{name}", metadata={"paper": name, "scoring": "rubric"},
                    replay_outputs=derive_replay_outputs(dest, rep))
    rep.carry("task.toml (scoring = rubric)")
    write_generic_install(dest, rep)
    for what in ("environment/Dockerfile: PaperBench gives the agent a generic GPU container",
                 "solution/: PaperBench has no reference workflow, so the oracle cannot run",
                 "calibration/: no partial or invalid submissions to calibrate the rubric",
                 "metadata domain and field"):
        rep.drop(what)
    return rep
