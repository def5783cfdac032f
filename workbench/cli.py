"""`workbench`: one verb per stage, plus task/rubric/env helpers. Thin over the library.

Problems with the user's input are printed as ``error: ...`` lines and exit 1; they never show a
traceback.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import typer

from .errors import ValidationProblem, WorkbenchError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Replay-grounded evaluation of AI agents that reproduce published science.")
task_app = typer.Typer(no_args_is_help=True, help="Task packages: check and list.")
rubric_app = typer.Typer(no_args_is_help=True, help="Rubric trees: statistics and aggregation.")
env_app = typer.Typer(no_args_is_help=True, help="Task environments on this host.")
app.add_typer(task_app, name="task")
app.add_typer(rubric_app, name="rubric")
app.add_typer(env_app, name="env")

DEMO_TASK = Path(__file__).resolve().parent.parent / "tasks" / "h2-pes"


def _echo_err(msg: str) -> None:
    typer.echo(msg, err=True)


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what each stage does.")) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")


# --- task --------------------------------------------------------------------------------------

@task_app.command("check")
def task_check(paths: list[Path] = typer.Argument(..., help="Task directories (or directories of tasks).")):
    """Validate task.toml, instruction.md, the rubric and required files; exit 1 on any error."""
    from .task import find_tasks
    from .task.check import check_task

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
def task_list(directory: Path = typer.Argument(Path("tasks"), help="Directory holding task packages.")):
    """Print one task id per line."""
    from .task import find_tasks

    for t in find_tasks(directory):
        typer.echo(t.name)


# --- rubric ------------------------------------------------------------------------------------

@rubric_app.command("stats")
def rubric_stats(path: Path, as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")):
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
def rubric_aggregate(path: Path, as_json: bool = typer.Option(False, "--json")):
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
def env_install(task_dir: Path, force: bool = typer.Option(False, help="Reinstall even if present.")):
    """Install a task's environment (environment/install.sh) for the local sandbox."""
    from .env import install_env
    from .task import load_task

    d = install_env(load_task(task_dir), force=force)
    typer.echo(f"environment: {d}" if d else "environment: host /usr (the task has no install.sh)")


@env_app.command("show")
def env_show(task_dir: Path):
    """Where a task's environment is and what it holds."""
    from .env import env_info
    from .task import load_task

    typer.echo(json.dumps(env_info(load_task(task_dir)), indent=2))


# --- stages ------------------------------------------------------------------------------------

@app.command("replay")
def replay_cmd(
    task_dir: Path,
    submission: Path = typer.Option(..., "--submission", help="The package to replay (with reproduce.sh)."),
    out: Path = typer.Option(..., "--out", help="Trial directory to write replay/ and evidence/ into."),
    timeout: float | None = typer.Option(None, "--timeout", help="Override the task's replay time limit (s)."),
):
    """Clean replay of a submission: fresh sandbox, no network, evidence frozen read-only."""
    from .replay import replay
    from .task import load_task

    if not submission.is_dir():
        raise WorkbenchError(f"{submission}: not a directory")
    prov = replay(load_task(task_dir), submission, out, timeout=timeout)
    typer.echo(f"replay {prov.status}: exit {prov.exit_code}, {prov.wall_sec:.1f} s"
               + (f" ({'; '.join(prov.failure_reasons)})" if prov.failure_reasons else ""))
    typer.echo(f"provenance: {out / 'replay' / 'provenance.json'}")
    typer.echo(f"evidence:   {out / 'evidence'}")
    raise typer.Exit(0 if prov.status == "succeeded" else 3)


def _print_scores(scores, scores_path: Path) -> None:
    ph = scores.phases
    typer.echo(f"R = {scores.R:.4f}  full = {str(scores.full).lower()}  coverage = {scores.coverage:.3f}"
               f"  (modeling {ph['modeling']:.3f}, execution {ph['execution']:.3f}, "
               f"validation {ph['validation']:.3f})")
    counts: dict[str, int] = {}
    for lf in scores.leaves:
        counts[lf.status] = counts.get(lf.status, 0) + 1
    typer.echo("leaves: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    typer.echo(f"scores: {scores_path}")


@app.command("score")
def score_cmd(task_dir: Path, trial: Path = typer.Option(..., "--trial", help="Trial directory."),
              as_json: bool = typer.Option(False, "--json", help="Print scores.json.")):
    """Score a trial's frozen evidence against the task's rubric; writes scores.json."""
    from .scoring import score_trial
    from .task import load_task

    scores = score_trial(load_task(task_dir), trial)
    if as_json:
        typer.echo(scores.model_dump_json(indent=2))
    else:
        _print_scores(scores, trial / "scores.json")


@app.command("run")
def run_cmd(
    task_dir: Path,
    agent: str = typer.Option(..., "--agent", help="Agent: oracle or nop."),
    out: Path = typer.Option(..., "--out", help="Run directory (trials go under OUT/trials/)."),
    attempt: int = typer.Option(1, "--attempt", min=1),
    timeout: float | None = typer.Option(None, "--timeout", help="Override the replay time limit (s)."),
):
    """One trial end to end: agent session -> clean replay -> scoring."""
    from .paths import RunPaths
    from .pipeline import run_trial
    from .scoring import Scores
    from .task import load_task

    record = run_trial(load_task(task_dir), agent, out, attempt=attempt, timeout=timeout)
    tp = RunPaths(out).trial(record.id)
    typer.echo(f"trial: {tp.root}")
    typer.echo(f"delivery {record.outcome['delivery']}, replay {record.outcome['replay']}")
    _print_scores(Scores.model_validate_json(tp.scores.read_text()), tp.scores)


@app.command("demo")
def demo_cmd(out: Path = typer.Option(Path("runs/demo"), "--out")):
    """Run the bundled demo task (PySCF H2 curve) with the oracle and nop agents; no API key needed."""
    from tqdm import tqdm

    from .env import install_env
    from .paths import RunPaths
    from .pipeline import run_trial
    from .task import load_task

    task = load_task(DEMO_TASK)
    install_env(task)
    if out.exists():  # a demo always starts over, so an edited task never trips the run lock
        from .evidence import make_writable

        make_writable(out)
        shutil.rmtree(out)
    rows = []
    for agent in tqdm(["oracle", "nop"], desc="demo trials", unit="trial", file=sys.stderr):
        rec = run_trial(task, agent, out)
        rows.append((agent, rec))
    typer.echo(f"\n{'agent':<8}{'R':>8}{'full':>7}{'coverage':>10}  trial")
    for agent, rec in rows:
        o = rec.outcome
        typer.echo(f"{agent:<8}{o['R']:>8.4f}{str(o['full']).lower():>7}{o['coverage']:>10.3f}  "
                   f"{RunPaths(out).trial(rec.id).root}")
    typer.echo(f"\nscores: {out}/trials/<trial>/scores.json   evidence: {out}/trials/<trial>/evidence/")


def main() -> None:
    try:
        app()
    except ValidationProblem as exc:
        for p in exc.problems:
            _echo_err(f"error: {p}")
        sys.exit(1)
    except WorkbenchError as exc:
        _echo_err(f"error: {exc}")
        sys.exit(1)


if __name__ == "__main__":
    main()
