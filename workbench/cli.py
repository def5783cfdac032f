"""`workbench`: one verb per stage, plus task/rubric/env helpers. Thin over the library.

Problems with the user's input are printed as ``error: ...`` lines and exit 1; they never show a
traceback.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import typer

from .errors import ValidationProblem, WorkbenchError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Replay-grounded evaluation of AI agents that reproduce published science.")
task_app = typer.Typer(no_args_is_help=True, help="Task packages: check and list.")
rubric_app = typer.Typer(no_args_is_help=True, help="Rubric trees: statistics and aggregation.")
env_app = typer.Typer(no_args_is_help=True, help="Task environments on this host.")
export_app = typer.Typer(no_args_is_help=True, help="A run in other tools' formats: Inspect AI logs, PaperBench trees.")
app.add_typer(task_app, name="task")
app.add_typer(rubric_app, name="rubric")
app.add_typer(env_app, name="env")
app.add_typer(export_app, name="export")

DEMO_TASK = Path(__file__).resolve().parent.parent / "tasks" / "h2-pes"
# every path a user types is resolved once, here at the edge, so the library never sees a relative path
# (a relative --out once reached the sota evaluator, which runs from another working directory)
# paths a command reads must exist: typer says so in one line, before anything runs
_EXISTING_DIR = {"resolve_path": True, "exists": True, "file_okay": False}
TASK_DIR = typer.Argument(..., help="A task package directory (with task.toml).", **_EXISTING_DIR)
RUN_DIR = typer.Argument(..., help="A run directory (with trials/).", **_EXISTING_DIR)
TRIAL = typer.Argument(..., help="A trial directory (RUN/trials/TRIAL).", **_EXISTING_DIR)
PATHS = typer.Argument(..., help="Task directories (or directories of tasks).", **_EXISTING_DIR)

SANDBOX_HELP = "bwrap (local) or docker (needs an engine)."


def _sandbox_name(value: str | None) -> str | None:
    """Checked before any trial is recorded (a typo once became a trial's infra_error)."""
    from .sandbox import SANDBOXES

    if value is not None and value not in SANDBOXES:
        raise typer.BadParameter(f"{value!r} is not a sandbox (known: {', '.join(sorted(SANDBOXES))})")
    return value


JSON_HELP = "Machine-readable output."


def _echo_err(msg: str) -> None:
    typer.echo(msg, err=True)


def _print_version(value: bool) -> None:
    if value:
        from .version import __version__

        typer.echo(f"workbench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what each stage does (also accepted "
                                       "after the verb)."),
          version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")


# --- task --------------------------------------------------------------------------------------

@task_app.command("check")
def task_check(paths: list[Path] = PATHS):
    """Validate task.toml, instruction.md, the rubric and required files; exit 1 on any error."""
    from .authoring.check import check_task
    from .task import find_tasks

    failed = False
    for p in paths:
        targets = find_tasks(p) if p.is_dir() and not (p / "task.toml").exists() else [p]
        if not targets:
            _echo_err(f"error: {p}: no task directories (with task.toml) found")
            failed = True
        for t in targets:
            rep = check_task(t)
            for w in rep.warnings:
                _echo_err(f"warning: {w}")
            for e in rep.errors:
                _echo_err(f"error: {e}")
            typer.echo(f"{'ok' if rep.ok else 'FAILED'}  {t}")
            failed |= not rep.ok
    raise typer.Exit(1 if failed else 0)


@task_app.command("list")
def task_list(directory: Path = typer.Argument(Path("tasks"), resolve_path=True, help="Directory of task packages."),
              long: bool = typer.Option(False, "--long", "-l", help="Field, scoring mode, leaves, validation.")):
    """Print one task id per line."""
    from .task import find_tasks, load_task
    from .task.records import ValidationRecord

    for t in find_tasks(directory):
        if not long:
            typer.echo(t.name)
            continue
        task = load_task(t)
        v = task.paths.tests / "validation.json"
        rec = ValidationRecord.model_validate_json(v.read_text()) if v.is_file() else None
        state = (f"validated {'ok' if rec.passed else 'FAILED'}, reference replay {rec.reference_replay_sec:.1f} s"
                 if rec else "not validated")
        typer.echo(f"{task.id:<24}{task.config.metadata.field or '-':<32}{task.scoring:<7}"
                   f"{len(task.rubric.leaves):>4} leaves  {state}")


@task_app.command("validate")
def task_validate(paths: list[Path] = PATHS,
                  no_install: bool = typer.Option(False, "--no-install", help="Do not install environments."),
                  no_record: bool = typer.Option(False, "--no-record",
                                                 help="Check only; do not rewrite tests/validation.json."),
                  sandbox: str = typer.Option("bwrap", "--sandbox", callback=_sandbox_name,
                                              help="bwrap, or docker: the task's image, and the scores compared "
                                                   "with the bwrap record."),
                  jobs: int = typer.Option(1, "--jobs", "-j", min=1,
                                           help="Tasks validated at once (a task keeps about one core busy).")):
    """Construction checks: reference replays, nop, calibration submissions, determinism, replay time."""
    from .authoring.validate import validate_tasks
    from .task import find_tasks

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
def task_freeze(task_dir: Path = TASK_DIR):
    """Record the content hashes of a validated task (tests/freeze.json); later changes fail `task check`."""
    from .authoring.validate import freeze_task
    from .task import load_task

    rec = freeze_task(load_task(task_dir))
    typer.echo(f"frozen {rec.task}: {len(rec.files)} files, digest {rec.content_hash[:16]}, "
               f"reviewers: {', '.join(rec.reviewers) or 'none'}")


@task_app.command("import")
def task_import(src: Path = typer.Argument(..., resolve_path=True,
                                           help="The source task (a directory, or a rubric.json for paperbench)."),
                dest: Path = typer.Argument(..., resolve_path=True, help="Where to write the workbench task package."),
                source: str = typer.Option(..., "--from", help="paperbench | paperbenchx | harbor | naturebench"),
                force: bool = typer.Option(False, help="Replace DEST if it exists.")):
    """Import another benchmark's task; lists what could not be carried over (also in DEST/IMPORT.md)."""
    from .authoring.check import check_task
    from .task.importers import import_task

    rep = import_task(source, src, dest, force=force)
    typer.echo(f"imported {src} → {dest} ({source}): {len(rep.carried)} item(s) carried")
    for item in rep.not_carried:
        typer.echo(f"  not carried: {item}")
    check = check_task(dest)
    typer.echo(f"task check: {'ok' if check.ok else 'FAILED'}"
               + "".join(f"\n  error: {e}" for e in check.errors))


# --- rubric ------------------------------------------------------------------------------------

@rubric_app.command("stats")
def rubric_stats(path: Path = typer.Argument(..., resolve_path=True, help="A rubric.json (PaperBench tree)."),
                 as_json: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """Leaves and effective weight per phase."""
    from .rubric import load_rubric

    rubric = load_rubric(path)
    stats = rubric.stats()
    if as_json:
        typer.echo(json.dumps(stats))
        return
    leaves = rubric.leaves
    typer.echo(f"{path}: {stats['leaves']} leaves, effective weights sum to {stats['weight_sum']:.6f}")
    typer.echo(f"{'phase':<12}{'leaves':>8}{'weight':>10}")
    for phase, w in stats["phases"].items():
        n = sum(1 for lf in leaves if lf.phase == phase)
        typer.echo(f"{phase:<12}{n:>8}{w:>10.4f}")
    methods = {}
    for lf in leaves:
        methods[lf.node.scoring_method] = methods.get(lf.node.scoring_method, 0) + 1
    typer.echo("methods: " + ", ".join(f"{k} {v}" for k, v in sorted(methods.items())))
    zero = sum(1 for lf in leaves if lf.effective_weight == 0)
    if zero:
        typer.echo(f"weight-0 (diagnostic) leaves: {zero}")


@rubric_app.command("aggregate")
def rubric_aggregate(path: Path = typer.Argument(..., resolve_path=True, help="A graded rubric tree (leaves "
                                                "carry `score`)."),
                     as_json: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """Recompute the root score of a graded tree (leaves carry `score`) and print it."""
    from .rubric import load_rubric
    from .rubric.tree import graded_root_score, is_full

    rubric = load_rubric(path, graded=True)
    score = graded_root_score(rubric)
    if as_json:
        stored = rubric.root.score
        typer.echo(json.dumps({"score": score, "stored": stored, "full": is_full(score)}))
    else:
        typer.echo(f"{score:.10f}")



# --- env ---------------------------------------------------------------------------------------

@env_app.command("install")
def env_install(task_dir: Path = TASK_DIR, force: bool = typer.Option(False, help="Reinstall even if present."),
                sandbox: str = typer.Option("bwrap", "--sandbox", help="bwrap: run environment/install.sh; docker: "
                                            "build the task's image from environment/Dockerfile.",
                                            callback=_sandbox_name),
                ca_bundle: Path | None = typer.Option(None, "--ca-bundle", exists=True, dir_okay=False,
                                                      resolve_path=True, help="Extra CA certificates (PEM) for "
                                                      "HTTPS in docker builds (env: WORKBENCH_CA_BUNDLE).")):
    """Install a task's environment for a sandbox: the bwrap venv, or the docker image (no registry needed)."""
    from .env import install_env, install_image
    from .task import load_task

    if sandbox == "docker":
        tag, image_id = install_image(load_task(task_dir), ca_bundle=ca_bundle, say=_echo_err)
        typer.echo(f"image: {tag} ({image_id})")
        return
    d = install_env(load_task(task_dir), force=force, say=_echo_err)
    typer.echo(f"environment: {d}" if d else "environment: host /usr (the task has no install.sh)")


@env_app.command("show")
def env_show(task_dir: Path = TASK_DIR):
    """Where a task's environment is and what it holds."""
    from .env import env_info
    from .task import load_task

    typer.echo(json.dumps(env_info(load_task(task_dir)), indent=2))


# --- stages ------------------------------------------------------------------------------------

@app.command("replay")
def replay_cmd(
    task_dir: Path = TASK_DIR,
    submission: Path = typer.Option(..., "--submission", resolve_path=True,
                                    help="The package to replay (with reproduce.sh)."),
    out: Path = typer.Option(..., "--out", resolve_path=True,
                             help="Trial directory to write replay/ and evidence/ into."),
    timeout: float | None = typer.Option(None, "--timeout", help="Override the task's replay time limit (s)."),
    sandbox: str = typer.Option("bwrap", "--sandbox", help=SANDBOX_HELP, callback=_sandbox_name),
):
    """Clean replay of a submission: fresh sandbox, no network, evidence frozen read-only."""
    from .replay import replay
    from .task import load_task

    if not submission.is_dir():
        raise WorkbenchError(f"{submission}: not a directory")
    prov = replay(load_task(task_dir), submission, out, timeout=timeout, sandbox=sandbox)
    typer.echo(f"replay {prov.status}: exit {prov.exit_code}, {prov.wall_sec:.1f} s"
               + (f" ({'; '.join(prov.failure_reasons)})" if prov.failure_reasons else ""))
    typer.echo(f"provenance: {out / 'replay' / 'provenance.json'}")
    typer.echo(f"evidence:   {out / 'evidence'}")
    raise typer.Exit(0 if prov.status == "succeeded" else 3)


def _stage_line(text: str) -> None:
    """A trial's stages as they start and end (stderr: stdout stays the result). The line can carry text a
    submission shaped (an error naming its files, a warning from the kernel), so it is printed plain."""
    from datetime import datetime

    from .terminal import one_line

    _echo_err(f"{datetime.now():%H:%M:%S}  {one_line(text)}")


LEAVES_HELP = "Also print every leaf: id, phase, status, score and its rationale on one line."


def _print_scores(scores, scores_path: Path, leaves: bool = False, rescore: str | None = None) -> None:
    ph = scores.phases
    typer.echo(f"R = {scores.R:.4f}  full = {str(scores.full).lower()}  coverage = {scores.coverage:.3f}"
               f"  (modeling {ph['modeling']:.3f}, execution {ph['execution']:.3f}, "
               f"validation {ph['validation']:.3f})")
    counts: dict[str, int] = {}
    for lf in scores.leaves:
        counts[lf.status] = counts.get(lf.status, 0) + 1
    typer.echo("leaves: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    u = scores.judge_usage
    if u.get("leaves"):
        cost = f", ${u['cost_usd']:.4f}" if u.get("cost_usd") is not None else ""
        typer.echo(f"judge: {u['leaves']} leaves ({u['cached']} from cache), {u['calls_made']} model calls, "
                   f"{u['prompt_tokens'] + u['completion_tokens']} tokens{cost}"
                   + (f", {u['invalid_replies']} invalid replies re-asked" if u.get("invalid_replies") else ""))
    for change in scores.fingerprint_changes:
        typer.echo(f"judge fingerprint changed: {change}")
    withheld = [lf for lf in scores.leaves if lf.status == "withheld"]
    if withheld:  # the judge or task code failed, not the submission: say why, and that it is not final
        from .terminal import one_line

        causes = sorted({one_line(lf.error or lf.rationale or "withheld", 200) for lf in withheld})
        typer.echo(f"withheld: {len(withheld)} leaves, left out of R until rescored: {'; '.join(causes)}")
        if rescore:
            typer.echo(f"this trial needs rescoring: {rescore}")
    if leaves:
        from .terminal import leaf_table

        typer.echo("\n".join(["", *leaf_table(scores), ""]))
    typer.echo(f"scores: {scores_path}")


JUDGE_HELP = "LLM judge model for judge leaves (endpoint: OPENAI_BASE_URL/OPENAI_API_KEY or WORKBENCH_JUDGE_*)."


def _judge(model: str | None):
    from .scoring.judge import JudgeSettings

    return JudgeSettings.from_env(model)


@app.command("score")
def score_cmd(task_dir: Path = TASK_DIR, trial: Path = typer.Option(..., "--trial", help="Trial directory.",
                                                                   **_EXISTING_DIR),
              judge_model: str | None = typer.Option(None, "--judge-model", help=JUDGE_HELP),
              only_leaves: str | None = typer.Option(None, "--only-leaves", help="Comma-separated leaf ids to re-score "
                                                     "(the judge is called again for them); the rest is kept."),
              as_json: bool = typer.Option(False, "--json", help="Print scores.json."),
              leaves: bool = typer.Option(False, "--leaves", help=LEAVES_HELP),
              db: str | None = typer.Option(None, "--db", help="SQLAlchemy URL of the run's results store, whose "
                                            "reviews are applied (default: WORKBENCH_STORE_URL, else the run's)."),
              force: bool = typer.Option(False, "--force", help="Score a trial replayed for another task anyway "
                                         "(its scores are replaced).")):
    """Score a trial's frozen evidence against the task's rubric; writes scores.json (and, for a trial in a
    run, its trial.json outcome and index row)."""
    from .paths import run_of
    from .scoring import score_trial
    from .store import Store
    from .task import load_task

    only = {x.strip() for x in only_leaves.split(",") if x.strip()} if only_leaves else None
    run = run_of(trial)
    store = Store.for_run(run, db) if db and run is not None else None
    scores = score_trial(load_task(task_dir), trial, judge=_judge(judge_model), only_leaves=only, store=store,
                         force=force)
    if as_json:
        typer.echo(scores.model_dump_json(indent=2))
    else:
        _print_scores(scores, trial / "scores.json", leaves=leaves,
                      rescore=f"workbench score {task_dir} --trial {trial}"
                      + (f" --judge-model {judge_model}" if judge_model else ""))


def _options(pairs: list[str]) -> dict:
    """KEY=VALUE pairs; a VALUE that parses as JSON is taken as JSON (numbers, lists, objects)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise WorkbenchError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


@app.command("run")
def run_cmd(
    task_dir: Path = TASK_DIR,
    agent: str = typer.Option(..., "--agent", help="Agent: openai, cli, replay, oracle, nop, refuse."),
    out: Path = typer.Option(..., "--out", resolve_path=True, help="Run directory (trials go under OUT/trials/)."),
    model: str | None = typer.Option(None, "--model", help="Model name passed to the agent."),
    name: str | None = typer.Option(None, "--name", help="Configuration name (default: the agent's name)."),
    option: list[str] = typer.Option([], "--option", "-o", help="Agent option KEY=VALUE (VALUE may be JSON)."),
    time_scale: float = typer.Option(1.0, "--time-scale", help="Multiply the task's agent time budget."),
    max_turns: int | None = typer.Option(None, "--max-turns", help="Stop the agent after this many model turns."),
    max_cost: float | None = typer.Option(None, "--max-cost", help="USD; needs prices (-o or a matrix)."),
    judge_model: str | None = typer.Option(None, "--judge-model", help=JUDGE_HELP),
    attempt: int = typer.Option(1, "--attempt", min=1, help="Which attempt this is (a trial per attempt)."),
    engine: str = typer.Option("papermill", "--engine", help="papermill (notebooks kept) or inline."),
    timeout: float | None = typer.Option(None, "--timeout", help="Override the replay time limit (s)."),
    sandbox: str = typer.Option("bwrap", "--sandbox", help=SANDBOX_HELP, callback=_sandbox_name),
    force: bool = typer.Option(False, "--force", help="Replace this attempt's trial if OUT already has it."),
    leaves: bool = typer.Option(False, "--leaves", help=LEAVES_HELP),
):
    """One trial end to end: agent session -> clean replay -> scoring -> review queue."""
    from .agents import check_environments
    from .matrix import AgentConfig
    from .paths import RunPaths
    from .pipeline import lock_single_run, run_trial, trial_id
    from .scoring import Scores
    from .task import load_task
    from .trial_record import UNFINISHED, read_trial

    task = load_task(task_dir)
    config = AgentConfig(name=name or agent, agent=agent, model=model, options=_options(option),
                         time_scale=time_scale, max_turns=max_turns, max_cost_usd=max_cost)
    check_environments([config])  # before any trial is recorded
    judge = _judge(judge_model)  # a judge without an endpoint is refused before any trial is recorded
    run = RunPaths(out)
    existing = run.trial(trial_id(task.id, config.name, attempt))
    before = read_trial(existing)
    if before is not None and before.status in UNFINISHED:
        _echo_err(f"{existing.root}: attempt {attempt} was {before.status} ({before.error or 'its process died'}); "
                  "running it again from scratch")
    elif existing.trial_json.is_file() and not force:
        raise WorkbenchError(f"{existing.root}: attempt {attempt} of {config.name!r} on {task.id} is already there; "
                             f"--attempt {attempt + 1} for another, or --force to replace it")
    lock_single_run(run, task, config)
    try:
        record = run_trial(task, config, out, attempt=attempt, engine=engine, timeout=timeout, sandbox=sandbox,
                           judge=judge.public() if judge else None, progress=_stage_line)
    except KeyboardInterrupt:
        _echo_err(f"interrupted: trial {existing.root} marked interrupted; the same command runs it again")
        raise typer.Exit(130) from None
    tp = run.trial(record.id)
    typer.echo(f"trial: {tp.root}")
    typer.echo(f"delivery {record.outcome['delivery']}, replay {record.outcome['replay']}")
    _print_scores(Scores.model_validate_json(tp.scores.read_text()), tp.scores, leaves=leaves,
                  rescore=f"workbench score {task_dir} --trial {tp.root}"
                  + (f" --judge-model {judge_model}" if judge_model else ""))
    if engine == "papermill":
        typer.echo(f"notebooks: {tp.notebooks}")


@app.command("tour")
def tour_cmd(out: Path = typer.Option(Path("reports/tour.html"), "--out", resolve_path=True,
                                      help="The HTML page to write."),
             work_dir: Path | None = typer.Option(None, "--work-dir", resolve_path=True,
                                                  help="Where the tour's runs go (default: beside --out, in "
                                                       "tour-runs/).")):
    """Execute the guided tour notebook (notebooks/tour.ipynb) and render it as offline HTML."""
    from .tour import build_tour

    path = build_tour(out, work_dir=work_dir, progress=True)
    typer.echo(f"tour: {path} (executed notebook: {path.with_suffix('.ipynb')})")


@app.command("demo")
def demo_cmd(out: Path = typer.Option(Path("runs/demo"), "--out", resolve_path=True,
                                      help="The demo's run folder (started over if the demo made it)."),
             engine: str = typer.Option("papermill", "--engine", help="papermill or inline."),
             judge_model: str | None = typer.Option(None, "--judge-model", help=JUDGE_HELP)):
    """Run the bundled demo task (PySCF H2 curve) with the oracle and nop agents; no API key needed."""
    from tqdm import tqdm

    from .env import install_env
    from .io import start_fresh
    from .matrix import AgentConfig
    from .paths import RunPaths
    from .pipeline import lock_single_run, run_trial
    from .task import load_task

    start_fresh(out)  # a demo starts over (an edited task never trips the run lock), but only in its own folder
    task = load_task(DEMO_TASK)
    install_env(task, say=_echo_err)
    rows = []
    for agent in tqdm(["oracle", "nop"], desc="demo trials", unit="trial", file=sys.stderr):
        config = AgentConfig(name=agent, agent=agent)
        lock_single_run(RunPaths(out), task, config)
        judge = _judge(judge_model)
        rows.append((agent, run_trial(task, config, out, engine=engine, judge=judge.public() if judge else None)))
    typer.echo(f"\n{'agent':<8}{'R':>8}{'full':>7}{'coverage':>10}  trial")
    for agent, rec in rows:
        o = rec.outcome
        typer.echo(f"{agent:<8}{o['R']:>8.4f}{str(o['full']).lower():>7}{o['coverage']:>10.3f}  "
                   f"{RunPaths(out).trial(rec.id).root}")
    typer.echo(f"\nscores: {out}/trials/<trial>/scores.json   evidence: {out}/trials/<trial>/evidence/")
    if engine == "papermill":
        typer.echo(f"notebooks: {out}/trials/<trial>/notebooks/ (open them in JupyterLab)")
    pending = sum(rec.outcome.get("pending_review", 0) for _, rec in rows)
    if pending:
        typer.echo(f"{pending} leaves await review (no judge configured: --judge-model, or an expert)")


@app.command("batch")
def batch_cmd(
    matrix: Path = typer.Argument(..., resolve_path=True, help="MATRIX.toml: tasks x agent configurations x attempts."),
    out: Path = typer.Option(..., "--out", resolve_path=True, help="Run directory (run.json, results.db, trials/)."),
    executor: str = typer.Option("local", "--executor", help="local (process pool), dask or slurm."),
    workers: int = typer.Option(2, "--workers", "--jobs", min=1,
                                help="Parallel trials (with --executor slurm: SLURM jobs kept in the queue)."),
    partition: str | None = typer.Option(None, "--partition", help="slurm: the partition (default: the cluster's)."),
    walltime: str | None = typer.Option(None, "--walltime", help="slurm: each job's time limit, HH:MM:SS [01:00:00]."),
    lifetime: str | None = typer.Option(None, "--lifetime",
                                        help="slurm: a worker retires after this (default: walltime less a tenth)."),
    lifetime_stagger: str | None = typer.Option(
        None, "--lifetime-stagger", help="slurm: workers retire up to this much apart (default: walltime / 20)."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Join an existing Dask scheduler (address)."),
    resume: bool = typer.Option(False, "--resume", help="Continue a batch: complete trials are kept."),
    rerun_status: list[str] = typer.Option([], "--rerun-status",
                                           help="With --resume, also re-run trials in this status (infra_error)."),
    engine: str | None = typer.Option(None, "--engine", help="papermill or inline (default: the matrix's)."),
    sandbox: str | None = typer.Option(None, "--sandbox", help="bwrap or docker (default: the matrix's).",
                                          callback=_sandbox_name),
):
    """Run every (task, configuration, attempt) of a matrix; resumable, each outcome exactly once.

    The LLM judge is the matrix's `judge_model` (its endpoint and key come from the environment)."""
    from .batch import run_batch, summary_rows

    slurm = {"partition": partition, "walltime": walltime, "lifetime": lifetime, "lifetime_stagger": lifetime_stagger}
    res = run_batch(matrix, out, executor=executor, workers=workers, scheduler=scheduler, resume=resume,
                    rerun_status=tuple(rerun_status), engine=engine, sandbox=sandbox, slurm=slurm)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(res.counts.items()) if v)
    typer.echo(f"{res.total} trials ({counts})" + (f" on {res.executor}" if res.executor else ""))
    typer.echo(f"\n{'config':<20}{'trials':>7}{'complete':>9}{'infra':>7}{'mean R':>9}{'full':>6}")
    for r in summary_rows(res.out):
        mean = f"{r['mean_R']:.4f}" if r["mean_R"] is not None else "-"
        typer.echo(f"{r['config']:<20}{r['trials']:>7}{r['complete']:>9}{r['infra_error']:>7}{mean:>9}{r['full']:>6}")
    typer.echo(f"\nresults: {res.out / 'results.db'}   trials: {res.out / 'trials'}")
    if res.interrupted:
        typer.echo(f"interrupted: continue with `workbench batch {matrix} --out {out} --resume`", err=True)
        raise typer.Exit(130)


@app.command("trajectory")
def trajectory_cmd(trial: Path = TRIAL, fmt: str = typer.Option("atif", "--format", help="atif (Harbor ATIF v1.8)."),
                   out: Path | None = typer.Option(None, "--out", resolve_path=True,
                                                   help="Write here instead of stdout.")):
    """Export a trial's agent trajectory (session/trajectory.jsonl) to another format."""
    from .io import atomic_write_json
    from .paths import TrialPaths
    from .trajectory import to_atif

    if fmt != "atif":
        raise WorkbenchError(f"unknown trajectory format {fmt!r}; known: atif")
    if not TrialPaths(trial).trajectory.is_file():
        raise WorkbenchError(f"{trial}: no session/trajectory.jsonl (not a trial directory?)")
    data = to_atif(trial)
    if out:
        atomic_write_json(out, data)
        typer.echo(f"wrote {out} ({len(data['steps'])} steps)")
    else:
        typer.echo(json.dumps(data, indent=2))


EXPORT_OUT = typer.Option(..., "--out", resolve_path=True, help="Directory to write into (created).")
# checked by the exporter, so a wrong path is one `error:` line whatever is wrong with it
TRIAL_OR_RUN = typer.Argument(..., help="A trial directory, or a run directory (every trial).", resolve_path=True)


@export_app.command("inspect")
def export_inspect_cmd(run_dir: Path = TRIAL_OR_RUN, out: Path = EXPORT_OUT):
    """Inspect AI eval logs (JSON), one per configuration x task; open them with `inspect view --log-dir OUT`."""
    from .export.inspect_log import export_inspect

    written = export_inspect(run_dir, out)
    typer.echo(f"wrote {len(written)} Inspect logs to {out}   (inspect view --log-dir {out})")


@export_app.command("paperbench")
def export_paperbench_cmd(path: Path = TRIAL_OR_RUN, out: Path = EXPORT_OUT):
    """PaperBench graded task trees, one <trial-id>.json per scored trial; each root's score is the trial's R."""
    from .export.paperbench import export_paperbench

    written = export_paperbench(path, out)
    typer.echo(f"wrote {len(written)} graded task trees to {out}")


@app.command("judge-eval")
def judge_eval_cmd(run_dir: Path = RUN_DIR, as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
                   db: str | None = typer.Option(None, "--db", help="SQLAlchemy URL of the results store (default: "
                                                 "WORKBENCH_STORE_URL, else RUN_DIR/results.db).")):
    """The judge's verdicts against expert reviews of the same leaves and evidence: accuracy, macro F1, kappa."""
    from .review.judge_eval import judge_eval

    res = judge_eval(run_dir, _review_store(run_dir, db))
    if as_json:
        typer.echo(json.dumps(res, indent=2, default=str))
        return
    typer.echo(f"{res['pairs']} leaves judged and reviewed ({res['judged_leaves']} judged, "
               f"{res['reviewed_leaves']} reviewed)")
    if not res["pairs"]:
        raise typer.Exit(0)
    typer.echo(f"{'':<12}{'n':>5}{'acc':>8}{'prec':>8}{'recall':>8}{'F1':>8}{'macroF1':>9}{'kappa':>8}")
    for label, m in [("overall", res["overall"]), *res["by_phase"].items()]:
        typer.echo(f"{label:<12}{m['n']:>5}{m['accuracy']:>8.3f}{m['precision']:>8.3f}{m['recall']:>8.3f}"
                   f"{m['f1']:>8.3f}{m['macro_f1']:>9.3f}{m['kappa']:>8.3f}")
    for d in res["disagreements"]:
        typer.echo(f"disagree: {d['trial']} {d['leaf']}: judge {d['judge']} vs {d['reviewer']} {d['expert']}")


review_app = typer.Typer(no_args_is_help=True, help="Expert review of leaves.")
app.add_typer(review_app, name="review")


LEAF = typer.Argument(..., help="A leaf id of the trial's rubric (e.g. C9).")
LEAF_SCORE = typer.Argument(..., help="The leaf's score: 0 or 1 (binary leaves), or in [0, 1] (continuous).")
COMMENT = typer.Option("", "--comment", help="Why (recorded with the review).")
DB_OPTION = typer.Option(None, "--db", help="SQLAlchemy URL of the results store (default: WORKBENCH_STORE_URL, "
                                            "else RUN_DIR/results.db).")


def _review_store(run_dir: Path, db: str | None):
    from .paths import RunPaths
    from .store import Store

    if not RunPaths(run_dir).trials.is_dir():
        raise WorkbenchError(f"{run_dir}: no trials/ directory (not a run directory)")
    return Store.for_run(run_dir, db)


def _echo_review(rec: dict, leaf: str, score: float, who: str) -> None:
    status = rec["leaf_status"] + ("" if rec["leaf_score"] is None else f" {rec['leaf_score']:g}")
    typer.echo(f"review {rec['review_id']}: {rec['trial_id']} {leaf}: {rec['previous_score']} -> {score} by {who}; "
               f"leaf {status}; R {rec['R_before']:.4f} -> {rec['R']:.4f}")


def _trial_store(trial: Path, db: str | None):
    from .review.records import run_of
    from .store import Store

    run = run_of(trial)
    if run is None:
        raise WorkbenchError(f"{trial} is not inside a run directory (RUN/trials/TRIAL); reviews live in a run's store")
    return Store.for_run(run, db)


@review_app.command("set")
def review_set_cmd(trial: Path = TRIAL, leaf: str = LEAF, score: float = LEAF_SCORE,
                   reviewer: str = typer.Option(..., "--reviewer", help="Who reviews (recorded)."),
                   comment: str = COMMENT, db: str | None = DB_OPTION):
    """Record an expert's score for one leaf of a trial (append-only); scores.json and R are recomputed."""
    from .review.records import record_review

    rec = record_review(trial, leaf, score, reviewer=reviewer, comment=comment, store=_trial_store(trial, db))
    _echo_review(rec, leaf, score, reviewer)


@review_app.command("adjudicate")
def review_adjudicate_cmd(trial: Path = TRIAL, leaf: str = LEAF, score: float = LEAF_SCORE,
                          reviewer: str = typer.Option(..., "--reviewer", help="Who decides (recorded)."),
                          comment: str = COMMENT, db: str | None = DB_OPTION):
    """The final decision on a leaf (usually a disputed one); it outranks every review."""
    from .review.records import record_review

    rec = record_review(trial, leaf, score, reviewer=reviewer, comment=comment, kind="adjudication",
                        store=_trial_store(trial, db))
    _echo_review(rec, leaf, score, reviewer)


@review_app.command("configure")
def review_configure_cmd(run_dir: Path = RUN_DIR, reviewers_required: int = typer.Option(
        ..., "--reviewers-required", help="Independent reviewers per leaf before their verdict counts."),
        db: str | None = DB_OPTION):
    """Set how many independent reviewers a run requires; reviewed trials are re-decided at once."""
    from .review import set_reviewers_required

    n = set_reviewers_required(run_dir, reviewers_required, _review_store(run_dir, db))
    typer.echo(f"{run_dir}: {reviewers_required} reviewer(s) per leaf; {n} reviewed trial(s) re-decided")


@review_app.command("agreement")
def review_agreement_cmd(run_dir: Path = RUN_DIR, as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
                         db: str | None = DB_OPTION):
    """Agreement between independent reviewers: percent agreement and Cohen's kappa, per task and overall."""
    from .review import agreement

    res = agreement(_review_store(run_dir, db), Path(run_dir).resolve().name)
    if as_json:
        typer.echo(json.dumps({**res, "pairs": res["pairs"].to_dict("records")}, indent=2))
        return
    if res["overall"] is None:
        typer.echo("no leaf has two reviewers yet")
        return
    typer.echo(f"{'':<28}{'leaves':>7}{'agree %':>9}{'kappa':>8}")
    for label, m in [("overall", res["overall"]), *res["by_task"].items()]:
        typer.echo(f"{label:<28}{m['leaves']:>7}{m['percent_agreement']:>9.1f}{m['kappa']:>8.3f}")


@review_app.command("list")
def review_list_cmd(run_dir: Path = RUN_DIR, db: str | None = DB_OPTION):
    """Every leaf awaiting review in a run (pending an expert or the judge, withheld, disputed), and why."""
    from .review import awaiting_review
    from .terminal import awaiting_table

    typer.echo("\n".join(awaiting_table(awaiting_review(run_dir, _review_store(run_dir, db)))))


@review_app.command("queue")
def review_queue_cmd(run_dir: Path = RUN_DIR, db: str | None = DB_OPTION):
    """Leaves whose independent reviewers disagree (awaiting adjudication), and stale reviews: reviews of
    other evidence than the trial holds now (a re-run), which are never applied."""
    from .review import disputes
    from .review.records import stale_reviews

    store = _review_store(run_dir, db)
    df = disputes(store, run_dir.name)
    if df.empty:
        typer.echo("no disputed leaves")
    for r in df.itertuples():
        typer.echo(f"{r.trial_id} {r.leaf_id} [{r.phase}, weight {r.effective_weight:.4f}]: {r.reviews}")
    stale = stale_reviews(store, run_dir)
    if not stale.empty:
        typer.echo(f"{len(stale)} stale review(s), not applied (review the leaves again):")
    for r in stale.itertuples():
        typer.echo(f"  stale: {r.trial_id} {r.leaf_id}: {r.score:g} by {r.reviewer} ({r.created_at}): {r.why}")


@review_app.command("serve")
def review_serve_cmd(run_dir: Path = RUN_DIR, db: str | None = DB_OPTION, port: int = typer.Option(
        8866, "--port", help="The port to ask for; when it is taken Voila binds the next free one (printed).")):
    """Serve the leaf reviewer for a run as a Voila app on 127.0.0.1 (for experts who do not code); the
    URL printed is the one it bound (another port when PORT is taken). Ctrl-C stops it and its kernels."""
    from .review.serve import serve

    code = serve(run_dir, port, db, log=sys.stderr,
                 on_ready=lambda url: typer.echo(f"reviewer for {run_dir} at {url} (Ctrl-C stops it)"))
    typer.echo("reviewer stopped" if code == 0 else f"reviewer exited with status {code}")
    raise typer.Exit(code)


@app.command("report")
def report_cmd(runs_dir: Path = typer.Argument(..., help="A run or a directory of runs.", **_EXISTING_DIR),
               out: Path = typer.Option(..., "--out", resolve_path=True, help="The HTML file to write (the executed "
                                                                            "notebook is kept beside it)."),
               title: str | None = typer.Option(None, "--title", help="The report's title (default: the folder's "
                                                "name)."),
               static: bool = typer.Option(False, "--static", help="Matplotlib PNGs instead of interactive plotly.")):
    """Aggregate the runs under RUNS_DIR (or one run) into an offline HTML report (papermill + nbconvert)."""
    from .analysis.report import build_report

    path = build_report(runs_dir, out, title=title, static=static)
    typer.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB) and {path.with_suffix('.ipynb')}")


@app.command("view")
def view_cmd(runs_dir: Path = typer.Argument(Path("runs"), help="A run or a directory of runs.", **_EXISTING_DIR),
             port: int = typer.Option(8765, "--port", help="Port on 127.0.0.1 (0: any free port)."),
             review_url: str | None = typer.Option(None, "--review-url", help="The reviewer's URL (`workbench "
                                                   "review serve`), to link each leaf to it.")):
    """Browse runs and trials in a local web app on 127.0.0.1; it refreshes while a batch runs."""
    from .view.server import ViewServer

    try:
        server = ViewServer(runs_dir, port=port, review_url=review_url)
    except OSError as exc:
        raise WorkbenchError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    typer.echo(f"workbench view of {runs_dir} at {server.url} (Ctrl-C stops it)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    typer.echo("stopped")


@app.command("index")
def index_cmd(run_dir: Path = RUN_DIR, db: str | None = typer.Option(None, "--db", help="SQLAlchemy URL (default: "
                                                                              "RUN_DIR/results.db).")):
    """(Re)build the results index from a run's trial directories."""
    from .paths import RunPaths
    from .store import Store

    if not RunPaths(run_dir).trials.is_dir():
        raise WorkbenchError(f"{run_dir}: no trials/ directory (not a run directory)")
    store = Store(db) if db else Store.for_run(run_dir)
    n = store.rebuild(run_dir)
    typer.echo(f"indexed {n} trial(s) into {db or RunPaths(run_dir).results_db}")


VERBOSE_FLAGS = ("-v", "--verbose")


def hoist_verbose(argv: list[str]) -> list[str]:
    """``-v`` is the app's option; users type it after the verb too (``workbench run ... -v``), so it is
    moved before the verb. Nothing after ``--`` is touched."""
    end = argv.index("--") if "--" in argv else len(argv)
    flags = [a for a in argv[:end] if a in VERBOSE_FLAGS]
    return flags[:1] + [a for a in argv[:end] if a not in VERBOSE_FLAGS] + argv[end:]


def environment_problem(exc: BaseException) -> str | None:
    """The one line for a fault of the user's machine rather than of the workbench (a folder that
    cannot be written, a full disk, a results store that refuses), or None for a bug."""
    import errno

    from sqlalchemy.exc import SQLAlchemyError

    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC,
                                                  errno.EDQUOT):
        where = f"{exc.filename}: " if exc.filename else ""
        hint = "free some space" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "the workbench must write there"
        return f"{where}{exc.strerror} ({hint})"
    if isinstance(exc, SQLAlchemyError):
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        return f"results store: {cause}"
    return None


def main() -> None:
    from pydantic import ValidationError

    from .errors import pydantic_problems

    try:
        app(args=hoist_verbose(sys.argv[1:]))
    except SystemExit as exc:
        if exc.code == 130 and _from_ctrl_c(exc):  # typer exits 130 on Ctrl-C without a word
            _echo_err("interrupted")
        raise
    except ValidationError as exc:  # a model built from command-line options
        for p in pydantic_problems("options", exc):
            _echo_err(f"error: {p}")
        sys.exit(1)
    except ValidationProblem as exc:
        for p in exc.problems:
            _echo_err(f"error: {p}")
        sys.exit(1)
    except WorkbenchError as exc:
        _echo_err(f"error: {exc}")
        sys.exit(1)
    except Exception as exc:
        problem = environment_problem(exc)
        if problem is None:
            raise  # a traceback means a bug in the workbench
        _echo_err(f"error: {problem}")
        sys.exit(1)


def _from_ctrl_c(exc: BaseException) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


if __name__ == "__main__":
    main()
