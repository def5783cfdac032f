"""`workbench task ...`, `workbench rubric ...` and `workbench env ...`: task packages, rubric trees and the
environments tasks run in."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .common import JSON_HELP, PATHS, TASK_DIR, echo_err, sandbox_name

task_app = typer.Typer(no_args_is_help=True, help="Task packages: check, list, validate, freeze and import.")
rubric_app = typer.Typer(no_args_is_help=True, help="Rubric trees: statistics and aggregation.")
env_app = typer.Typer(no_args_is_help=True, help="Task environments on this host.")


# --- task --------------------------------------------------------------------------------------

SCHEMAS = {  # the on-disk formats an author writes, each by its one pydantic model
    "rubric": ("workbench.rubric.model", "RubricNode", "tests/rubric.json: the rubric tree (a node)"),
    "task": ("workbench.task.model", "TaskConfig", "task.toml (as parsed from TOML)"),
    "questions": ("workbench.task.questions", "Questions", "tests/questions.json of a qa task"),
    "sota": ("workbench.task.sota_spec", "SotaSpec", "tests/sota.json of a sota task"),
    "discovery": ("workbench.task.discovery_spec", "DiscoverySpec", "tests/discovery.json of a discovery task"),
    "matrix": ("workbench.batch.matrix", "Matrix", "a batch's matrix.toml"),
}


@task_app.command("schema")
def task_schema_cmd(fmt: str = typer.Argument(..., metavar="rubric|task|questions|sota|discovery|matrix",
                                              help="Which format.")):
    """Print the JSON Schema of a format an author writes, from the model that reads it."""
    import importlib

    if fmt not in SCHEMAS:
        echo_err(f"error: no format {fmt!r}; choose one of {', '.join(SCHEMAS)}")
        raise typer.Exit(2)
    module, name, title = SCHEMAS[fmt]
    schema = getattr(importlib.import_module(module), name).model_json_schema()
    schema.setdefault("title", name)
    schema["description"] = title + (f". {schema['description']}" if schema.get("description") else "")
    typer.echo(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}, indent=2))


@task_app.command("new")
def task_new_cmd(dest: Path = typer.Argument(..., help="The new package's directory (new or empty)."),
                 mode: str = typer.Option("rubric", "--mode", help="The scoring mode's scaffold."),
                 name: str | None = typer.Option(None, "--name", help="[task] name (default local/DIR).")):
    """Write a task package to start from: a worked example with the science left out at TODO(author)."""
    from ..authoring.scaffold import new_task

    files = new_task(dest, mode, name)
    typer.echo(f"wrote {len(files)} files to {dest}; read {dest / 'README.md'}: what to fill in, in what order")


@task_app.command("check")
def task_check_cmd(paths: list[Path] = PATHS):
    """Validate task.toml, instruction.md, the rubric and required files; exit 1 on any error."""
    from ..authoring.check import check_task
    from ..paths import TaskPaths
    from ..task import find_tasks

    failed = False
    for p in paths:
        targets = find_tasks(p) if p.is_dir() and not TaskPaths(p).task_toml.exists() else [p]
        if not targets:
            echo_err(f"error: {p}: no task directories (with task.toml) found")
            failed = True
        for t in targets:
            rep = check_task(t)
            for w in rep.warnings:
                echo_err(f"warning: {w}")
            for e in rep.errors:
                echo_err(f"error: {e}")
            typer.echo(f"{'ok' if rep.ok else 'FAILED'}  {t}")
            failed |= not rep.ok
    raise typer.Exit(1 if failed else 0)


@task_app.command("list")
def task_list_cmd(directory: Path = typer.Argument(Path("tasks"), resolve_path=True,
                                                   help="Directory of task packages."),
                  long: bool = typer.Option(False, "--long", "-l", help="Field, scoring mode, leaves, validation.")):
    """Print one task id per line."""
    from ..task import find_tasks, load_task
    from ..task.construction import read_validation

    for t in find_tasks(directory):
        if not long:
            typer.echo(t.name)
            continue
        task = load_task(t)
        rec = read_validation(task.paths)
        state = (f"validated {'ok' if rec.passed else 'FAILED'}, reference replay {rec.reference_replay_sec:.1f} s"
                 if rec else "not validated")
        typer.echo(f"{task.id:<24}{task.config.metadata.field or '-':<32}{task.scoring:<7}"
                   f"{len(task.rubric.leaves):>4} leaves  {state}")


@task_app.command("validate")
def task_validate_cmd(paths: list[Path] = PATHS,
                      no_install: bool = typer.Option(False, "--no-install", help="Do not install environments."),
                      no_record: bool = typer.Option(False, "--no-record",
                                                     help="Check only; do not rewrite tests/validation.json."),
                      sandbox: str = typer.Option("bwrap", "--sandbox", callback=sandbox_name,
                                                  help="bwrap, or docker: the task's image, and the scores "
                                                       "compared with the bwrap record."),
                      jobs: int = typer.Option(1, "--jobs", "-j", min=1,
                                               help="Tasks validated at once (a task keeps about one core busy).")):
    """Construction checks: reference replays, nop, calibration submissions, determinism, replay time."""
    from ..authoring.validate import validate_tasks
    from ..task import find_tasks

    failed = False
    targets = [t for p in paths for t in find_tasks(p)]
    for rec in validate_tasks(targets, jobs=jobs, install=not no_install, write=not no_record, sandbox=sandbox):
        verdict = "ok" if rec.passed else "FAILED"
        typer.echo(f"{verdict}  {rec.task}  (reference replay {rec.reference_replay_sec:.1f} s"
                   + (f", under {sandbox})" if sandbox != "bwrap" else ")"))
        for c in rec.checks:
            typer.echo(f"  [{'x' if c.passed else ' '}] {c.name}: {c.detail}")
        failed |= not rec.passed
    raise typer.Exit(1 if failed else 0)


@task_app.command("freeze")
def task_freeze_cmd(task_dir: Path = TASK_DIR):
    """Record the content hashes of a validated task (tests/freeze.json); later changes fail `task check`."""
    from ..authoring.validate import freeze_task
    from ..task import load_task

    rec = freeze_task(load_task(task_dir))
    typer.echo(f"frozen {rec.task}: {len(rec.files)} files, digest {rec.content_hash[:16]}, "
               f"reviewers: {', '.join(rec.reviewers) or 'none'}")


@task_app.command("import")
def task_import_cmd(src: Path = typer.Argument(..., resolve_path=True,
                                               help="The source task (a directory, or a rubric.json for paperbench)."),
                    dest: Path = typer.Argument(..., resolve_path=True,
                                                help="Where to write the workbench task package."),
                    source: str = typer.Option(..., "--from", help="paperbench | paperbenchx | harbor | naturebench"),
                    force: bool = typer.Option(False, help="Replace DEST if it exists.")):
    """Import another benchmark's task; lists what could not be carried over (also in DEST/IMPORT.md)."""
    from ..authoring.check import check_task
    from ..task.importers import import_task

    rep = import_task(source, src, dest, force=force)
    typer.echo(f"imported {src} → {dest} ({source}): {len(rep.carried)} item(s) carried")
    for item in rep.not_carried:
        typer.echo(f"  not carried: {item}")
    check = check_task(dest)
    typer.echo(f"task check: {'ok' if check.ok else 'FAILED'}"
               + "".join(f"\n  error: {e}" for e in check.errors))


# --- rubric ------------------------------------------------------------------------------------

@rubric_app.command("stats")
def rubric_stats_cmd(path: Path = typer.Argument(..., resolve_path=True, help="A rubric.json (PaperBench tree)."),
                     as_json: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """Leaves and effective weight per phase, scoring methods, diagnostic (weight-0) leaves."""
    from ..rubric import load_rubric

    stats = load_rubric(path).stats()
    if as_json:
        typer.echo(json.dumps(stats))
        return
    typer.echo(f"{path}: {stats['leaves']} leaves, effective weights sum to {stats['weight_sum']:.6f}")
    typer.echo(f"{'phase':<12}{'leaves':>8}{'weight':>10}")
    for phase, w in stats["phases"].items():
        typer.echo(f"{phase:<12}{stats['phase_leaves'][phase]:>8}{w:>10.4f}")
    typer.echo("methods: " + ", ".join(f"{k} {v}" for k, v in stats["methods"].items()))
    if stats["diagnostic_leaves"]:
        typer.echo(f"weight-0 (diagnostic) leaves: {stats['diagnostic_leaves']}")


@rubric_app.command("aggregate")
def rubric_aggregate_cmd(path: Path = typer.Argument(..., resolve_path=True, help="A graded rubric tree (leaves "
                                                    "carry `score`)."),
                         as_json: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """Recompute the root score of a graded tree (leaves carry `score`) and print it."""
    from ..rubric import load_rubric
    from ..rubric.tree import graded_root_score, is_full

    rubric = load_rubric(path, graded=True)
    score = graded_root_score(rubric)
    if as_json:
        typer.echo(json.dumps({"score": score, "stored": rubric.root.score, "full": is_full(score)}))
    else:
        typer.echo(f"{score:.10f}")


# --- env ---------------------------------------------------------------------------------------

@env_app.command("install")
def env_install_cmd(task_dir: Path = TASK_DIR, force: bool = typer.Option(False, help="Reinstall even if present."),
                    sandbox: str = typer.Option("bwrap", "--sandbox", callback=sandbox_name,
                                                help="bwrap: run environment/install.sh; docker: build the task's "
                                                     "image from environment/Dockerfile."),
                    ca_bundle: Path | None = typer.Option(None, "--ca-bundle", exists=True, dir_okay=False,
                                                          resolve_path=True, help="Extra CA certificates (PEM) for "
                                                          "HTTPS in docker builds (env: WORKBENCH_CA_BUNDLE).")):
    """Install a task's environment for a sandbox: the bwrap venv, or the docker image (no registry needed)."""
    from ..sandbox.environments import install_env, install_image
    from ..task import load_task

    if sandbox == "docker":
        tag, image_id = install_image(load_task(task_dir), ca_bundle=ca_bundle, say=echo_err)
        typer.echo(f"image: {tag} ({image_id})")
        return
    d = install_env(load_task(task_dir), force=force, say=echo_err)
    typer.echo(f"environment: {d}" if d else "environment: host /usr (the task has no install.sh)")


@env_app.command("show")
def env_show_cmd(task_dir: Path = TASK_DIR):
    """Where a task's environment is and what it holds."""
    from ..sandbox.environments import env_info
    from ..task import load_task

    typer.echo(json.dumps(env_info(load_task(task_dir)), indent=2))
