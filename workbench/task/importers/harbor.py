"""Harbor tasks and PaperBenchX packages (Harbor 1.1 layout plus paper, starter, rubric and refs).

Carried: task.toml's task/metadata/agent/environment values, instruction.md, environment/ (Dockerfile,
paper, starter submission), solution/, tests/ (rubric.json with PaperBenchX's evidence_inputs, gates and
critical flags; refs/); ``[metadata.replay] outputs`` are derived from the rubric's evidence paths. Not carried,
and listed: verifier credentials and judge settings, user names, network switches (the replay never has
network), Harbor's tests/test.sh verifier, and judge tool operations (``metric_operation``) the
workbench's judge does not have."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from ...errors import WorkbenchError
from ...rubric.tree import parse_rubric
from .common import ImportReport, derive_replay_outputs, write_toml_task

SCALAR = (str, int, float, bool)


def _scalars(section: dict, prefix: str, rep: ImportReport) -> dict:
    out = {}
    for k, v in section.items():
        if isinstance(v, SCALAR) or (isinstance(v, list) and all(isinstance(x, SCALAR) for x in v)):
            out[k] = v
        else:
            rep.drop(f"task.toml [{prefix}] {k}: nested values are not part of the workbench's schema")
    return out


def _toml(src: Path, rep: ImportReport, default_name: str) -> dict:
    """The arguments of write_toml_task from the source's task.toml (written once the rubric is in place, which
    the replay's output roots are derived from)."""
    path = src / "task.toml"
    if not path.is_file():
        raise WorkbenchError(f"{src}: no task.toml (not a Harbor task)")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    task = data.get("task") or {}
    agent = data.get("agent") or {}
    env = data.get("environment") or {}
    verifier = data.get("verifier") or {}
    if verifier.get("env"):
        rep.drop(f"[verifier.env] {', '.join(sorted(verifier['env']))}: credentials and judge settings never travel "
                 "with a task (the workbench's judge is configured with --judge-model / WORKBENCH_JUDGE_*)")
    for sect, key in (("agent", "user"), ("verifier", "user")):
        if (data.get(sect) or {}).get(key):
            rep.drop(f"[{sect}] user = {data[sect][key]!r}: the sandbox always runs an unprivileged user")
    for key in ("allow_internet", "network_mode"):
        if key in env:
            rep.drop(f"[environment] {key} = {env[key]!r}: the replay never has network")
    for key in ("build_timeout_sec",):
        if key in env:
            rep.drop(f"[environment] {key}: images are built outside the workbench")
    if data.get("solution"):
        rep.drop("[solution] section (solution environment variables)")
    metadata = _scalars(data.get("metadata") or {}, "metadata", rep)
    environment = {k: env[k] for k in ("cpus", "memory_mb", "gpus", "storage_mb") if k in env}
    rep.carry("task.toml: [task], [metadata] values, [agent] timeout_sec, [environment] cpus/memory_mb/gpus/storage_mb")
    return dict(name=task.get("name") or default_name, description=task.get("description"), metadata=metadata,
                agent_timeout=agent.get("timeout_sec"), environment=environment)


def _write_toml(dest: Path, rep: ImportReport, toml: dict) -> None:
    write_toml_task(dest, **toml, replay_outputs=derive_replay_outputs(dest, rep))


def _copy(src: Path, dest: Path, rel: str, rep: ImportReport) -> bool:
    if not (src / rel).exists():
        return False
    if (src / rel).is_dir():
        shutil.copytree(src / rel, dest / rel, symlinks=True, dirs_exist_ok=True)
    else:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dest / rel)
    rep.carry(rel)
    return True


def _common(src: Path, dest: Path, rep: ImportReport) -> None:
    if not _copy(src, dest, "instruction.md", rep):
        rep.drop("instruction.md: missing in the source; write the public task contract")
    _copy(src, dest, "environment", rep)
    if not (dest / "environment" / "install.sh").is_file():
        rep.drop("environment/install.sh: only the Dockerfile came over; the local bwrap sandbox needs an install.sh "
                 "(or run with --sandbox docker)")
    if _copy(src, dest, "solution", rep) and not (dest / "solution" / "reproduce.sh").is_file():
        rep.drop("solution/reproduce.sh: the source's solution (e.g. solve.sh) was carried as is, but the oracle "
                 "runs solution/reproduce.sh, a package that regenerates results")
    if not (src / "solution").exists():
        rep.drop("solution/: none in the source, so the oracle cannot run")
    if not (src / "calibration").exists():
        rep.drop("calibration/: no partial or invalid submissions to calibrate the rubric")


def import_harbor(src: Path, dest: Path) -> ImportReport:
    rep = ImportReport("harbor", src, dest)
    toml = _toml(src, rep, f"harbor/{src.name}")
    _common(src, dest, rep)
    tests = dest / "tests"
    if (src / "tests").is_dir():
        shutil.copytree(src / "tests", tests, symlinks=True, dirs_exist_ok=True)
        rep.carry("tests/ (private)")
    tests.mkdir(exist_ok=True)
    if (tests / "test.sh").is_file():
        rep.drop("tests/test.sh: Harbor's verifier script (reward.txt) is kept but not executed; the workbench scores "
                 "frozen evidence against a rubric. tests/rubric.json has one expert leaf standing in for it")
    if not (tests / "rubric.json").is_file():
        leaf = {"id": "verifier", "weight": 1, "task_category": "Validation", "method": "expert",
                "title": "The task's own verifier passes",
                "requirements": "The behaviour tests/test.sh checks holds for the replayed submission."}
        (tests / "rubric.json").write_text(json.dumps({"id": src.name, "requirements": "Imported Harbor task.",
                                                       "sub_tasks": [leaf]}, indent=2))
        rep.drop("a rubric: Harbor tasks have none; write tests/rubric.json with modeling/execution/validation leaves")
    _write_toml(dest, rep, toml)
    return rep


def import_paperbenchx(src: Path, dest: Path) -> ImportReport:
    rep = ImportReport("paperbenchx", src, dest)
    toml = _toml(src, rep, f"paperbenchx/{src.name}")
    _common(src, dest, rep)
    rubric_src = src / "tests" / "rubric.json"
    if not rubric_src.is_file():
        raise WorkbenchError(f"{rubric_src}: missing (not a PaperBenchX package)")
    tests = dest / "tests"
    tests.mkdir(exist_ok=True)
    data = json.loads(rubric_src.read_text(encoding="utf-8"))
    rubric = parse_rubric(data, str(rubric_src))
    shutil.copy2(rubric_src, tests / "rubric.json")
    leaves = rubric.leaves
    rep.carry(f"tests/rubric.json: {len(leaves)} leaves with evidence_inputs, gates and critical flags "
              "(effective weights are recomputed from the tree)")
    numeric = [lf.id for lf in leaves if (lf.node.check or {}).get("kind") == "numeric_checks"
               and lf.node.scoring_type == "deterministic_metric"]
    if numeric:
        rep.carry(f"numeric_checks on {len(numeric)} deterministic_metric leaves ({', '.join(numeric[:8])}): scored by "
                  "code (check kind numeric_checks) on submission/results/metrics.json, under each leaf's "
                  "metric_operation. That file is the submission's claim: gate these leaves with written_by or a "
                  "recompute of the metrics, or typed-in numbers pass them (PaperBenchX's verifier derives them from "
                  "candidate arrays with tests/src/scientific_metrics.py, which does not run here)")
    qualified = [lf.id for lf in leaves if lf.node.source_qualification_ids]
    if qualified:
        rep.carry(f"source_qualification_ids on {len(qualified)} leaves ({', '.join(qualified[:8])}): applied as "
                  "PaperBenchX applies them (the leaf scores 0 unless every named leaf scores exactly 1; a named "
                  "leaf still pending leaves it uncounted)")
    hybrid = [lf.id for lf in leaves if lf.node.hybrid_check]
    if hybrid:
        rep.drop(f"check.mode on {len(hybrid)} leaves ({', '.join(hybrid[:8])}): PaperBenchX's fail-only numeric "
                 "pre-check before its judge is not run here; the judge decides, with each check's manual in its "
                 "private notes")
    ops = [lf.id for lf in leaves if lf.node.metric_operation and lf.id not in numeric]
    if ops:
        rep.drop(f"metric_operation on {len(ops)} leaves: PaperBenchX's judge tools (derive_scientific_metrics) do not "
                 "exist here; the judge reads the evidence with its own tools, or write deterministic checks")
    _copy(src, dest, "tests/refs", rep)
    cfg = src / "tests" / "config"
    if (cfg / "judge_prompt.md").is_file():
        shutil.copy2(cfg / "judge_prompt.md", tests / "judge.md")
        rep.carry("tests/config/judge_prompt.md → tests/judge.md (private context for the workbench's judge; its "
                  "own system prompt and verdict format still apply)")
    for f in sorted(cfg.glob("*")) if cfg.is_dir() else []:
        if f.name != "judge_prompt.md":
            rep.drop(f"tests/config/{f.name}: PaperBenchX verifier configuration, not used")
    for f in sorted((src / "tests").glob("*")):
        if f.name not in ("rubric.json", "refs", "config"):
            rep.drop(f"tests/{f.name}: not part of a workbench task package")
    _write_toml(dest, rep, toml)
    return rep
