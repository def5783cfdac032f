"""NatureBench packages: ``problem/`` (agent-visible brief, data description, data), ``evaluation/``
(hidden ``evaluator.py`` and ``ground_truth/``), ``environment/Dockerfile.v3`` and ``metadata.json``
(``performance_entries``: per dataset its primary metric, direction and the paper's SOTA text).

The result is a ``scoring = "sota"`` task: ``tests/sota.json`` from the performance entries, the
evaluator and its ground truth under ``tests/`` (side by side, so the evaluator's relative paths
hold), the brief as instruction.md. The evaluator runs with the replayed submission as its working
directory, so NatureBench's ``output/<instance>/`` convention becomes the replay's output root."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ...errors import WorkbenchError
from ..sota_spec import parse_sota
from .common import ImportReport, write_generic_install, write_toml_task

REPLAY_NOTE = """

## Delivery in the workbench

Deliver a package whose `bash reproduce.sh` regenerates your predictions under `output/<instance>/` in a
clean sandbox with no network. During a session, `submit_for_score` returns the official score of your
package as it is; the evaluator and the ground truth stay hidden.
"""


def _sota_spec(meta: dict, rep: ImportReport) -> dict:
    instances = {}
    for entry in meta.get("performance_entries") or []:
        name = str(entry.get("dataset_name") or f"instance-{len(instances) + 1}")
        metrics = entry.get("metrics") or []
        primary = [m for m in metrics if m.get("is_primary")] or metrics[:1]
        if not primary:
            rep.drop(f"instance {name}: no metric in metadata.json")
            continue
        if len(primary) > 1 or not any(m.get("is_primary") for m in metrics):
            rep.drop(f"instance {name}: {'several primary metrics' if len(primary) > 1 else 'no primary metric'}; "
                     f"{primary[0].get('name')} used")
        m = primary[0]
        direction = m.get("metric_direction") or "higher_is_better"
        texts = [str(s.get("value")) for s in m.get("sota_score") or [] if s.get("value") is not None]
        if not texts:
            rep.drop(f"instance {name}: no SOTA value for {m.get('name')}")
            continue
        text = " / ".join(texts)  # parse_sota takes the best variant for the direction
        try:
            value = parse_sota(text, direction)
        except ValueError as exc:
            rep.drop(f"instance {name}: SOTA {text!r} unreadable ({exc})")
            continue
        if value == 0:
            rep.drop(f"instance {name}: SOTA is 0, so g is undefined; add it to tests/sota.json with a normalizer")
            continue
        best = max(m.get("sota_score"), key=lambda s: _safe(s.get("value"), direction))
        baseline = m.get("baseline_score")
        instances[name] = {"metric": m.get("name"), "direction": direction, "sota": text,
                           "method": best.get("method"),
                           "baseline": baseline if isinstance(baseline, str | int | float) else None}
    return {"instances": instances}


def _safe(text, direction: str) -> float:
    try:
        v = parse_sota(str(text), direction)
    except ValueError:
        return float("-inf")
    return v if direction != "lower_is_better" else -v


def import_naturebench(src: Path, dest: Path) -> ImportReport:
    rep = ImportReport("naturebench", src, dest)
    meta_path = src / "metadata.json"
    if not meta_path.is_file() or not (src / "problem").is_dir():
        raise WorkbenchError(f"{src}: needs problem/ and metadata.json (not a NatureBench package)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    problem = src / "problem"
    brief = (problem / "README.md").read_text(encoding="utf-8") if (problem / "README.md").is_file() else ""
    if not brief:
        rep.drop("problem/README.md: missing; write the task brief in instruction.md")
    if (problem / "data_description.md").is_file():
        brief += "\n\n## Data description\n\n" + (problem / "data_description.md").read_text(encoding="utf-8")
        rep.carry("problem/data_description.md → instruction.md")
    env = dest / "environment"
    (env / "paper").mkdir(parents=True)
    (env / "paper" / "paper.md").write_text(
        "NatureBench tasks withhold the source paper: solve the problem as briefed in instruction.md.\n",
        encoding="utf-8")
    if (problem / "data").is_dir():
        shutil.copytree(problem / "data", env / "data", symlinks=True)
        rep.carry("problem/data → environment/data (install.sh copies it to $WORKBENCH_ENV/data, readable by "
                  "sessions and replays)")
        brief += ("\n\nThe task's data (NatureBench's `data/`) is at `$WORKBENCH_ENV/data/` in the environment "
                  "(read-only).\n")
    (dest / "instruction.md").write_text(brief + REPLAY_NOTE, encoding="utf-8")
    rep.carry("problem/README.md → instruction.md (with the workbench's delivery note)")
    for name in ("Dockerfile.v3", "Dockerfile"):
        if (src / "environment" / name).is_file():
            shutil.copy2(src / "environment" / name, env / "Dockerfile")
            rep.carry(f"environment/{name} → environment/Dockerfile")
            break
    else:
        rep.drop("environment/Dockerfile: none in the source")
    write_generic_install(dest, rep)
    starter = env / "starter_submission"
    starter.mkdir()
    (starter / "reproduce.sh").write_text("#!/usr/bin/env bash\necho 'not implemented' >&2\nexit 1\n")

    tests = dest / "tests"
    tests.mkdir()
    evaluation = src / "evaluation"
    if not (evaluation / "evaluator.py").is_file():
        raise WorkbenchError(f"{evaluation / 'evaluator.py'}: missing")
    for p in sorted(evaluation.iterdir()):
        (shutil.copytree if p.is_dir() else shutil.copy2)(p, tests / p.name)
        rep.carry(f"evaluation/{p.name} → tests/{p.name} (private)")
    spec = _sota_spec(meta, rep)
    if not spec["instances"]:
        raise WorkbenchError(f"{meta_path}: no performance entry with a usable primary metric and SOTA")
    (tests / "sota.json").write_text(json.dumps(spec, indent=2), encoding="utf-8")
    rep.carry(f"metadata.json performance_entries → tests/sota.json ({len(spec['instances'])} instance(s))")

    dm = meta.get("domain_metadata") or {}
    compute = meta.get("compute_resource_requirements") or {}
    gpu = str(compute.get("gpu") or compute.get("gpu_type") or "").strip()
    gpus = 1 if gpu and gpu.lower() not in ("none", "cpu", "cpu-only", "0", "false") else 0
    if gpus:
        rep.drop(f"compute: the GPU type ({gpu}); gpus = 1 is kept, so a host without a GPU refuses the task")
    name = meta.get("task_id") or meta.get("name") or src.name
    write_toml_task(dest, name=f"naturebench/{name}", description=meta.get("title"),
                    metadata={"domain": dm.get("domain") or meta.get("domain"),
                              "field": dm.get("subdomain") or dm.get("field") or meta.get("field"),
                              "paper": meta.get("paper_title") or meta.get("source_paper"), "scoring": "sota"},
                    agent_timeout=float(compute.get("time_limit_sec") or 4 * 3600),
                    environment={"gpus": gpus} if gpus else None, replay_outputs=["output"])
    rep.carry("task.toml (scoring = sota, replay output root output/)")
    for what in ("solution/: NatureBench has no reference solution, so the oracle cannot run",
                 "calibration/: no partial or invalid submissions"):
        rep.drop(what)
    return rep
