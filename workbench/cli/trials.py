"""The verbs that make trials: `replay`, `score`, `run`, `demo`, `tour`, `batch`, `discover` (a discovery run
of sessions), and `trajectory` (a trial's agent session in another format)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import typer

from ..errors import WorkbenchError, unknown
from .common import (
    EXISTING_DIR,
    JUDGE_HELP,
    LEAVES_HELP,
    SANDBOX_HELP,
    TASK_DIR,
    TRIAL,
    echo_err,
    echo_lines,
    judge_settings,
    key_values,
    public_judge,
    sandbox_name,
    stage_line,
)

app = typer.Typer()


@app.command("replay")
def replay_cmd(
    task_dir: Path = TASK_DIR,
    submission: Path = typer.Option(..., "--submission", resolve_path=True,
                                    help="The package to replay (with reproduce.sh)."),
    out: Path = typer.Option(..., "--out", resolve_path=True,
                             help="Trial directory to write replay/ and evidence/ into."),
    timeout: float | None = typer.Option(None, "--timeout", help="Override the task's replay time limit (s)."),
    sandbox: str = typer.Option("bwrap", "--sandbox", help=SANDBOX_HELP, callback=sandbox_name),
):
    """Clean replay of a submission: fresh sandbox, no network, evidence frozen read-only."""
    from ..paths import TrialPaths
    from ..replay.trial import replay_trial
    from ..task import load_task

    if not submission.is_dir():
        raise WorkbenchError(f"{submission}: not a directory")
    prov = replay_trial(load_task(task_dir), submission, out, timeout=timeout, sandbox=sandbox)
    typer.echo(f"replay {prov.status}: exit {prov.exit_code}, {prov.wall_sec:.1f} s"
               + (f" ({'; '.join(prov.failure_reasons)})" if prov.failure_reasons else ""))
    typer.echo(f"provenance: {TrialPaths(out).provenance}")
    typer.echo(f"evidence:   {TrialPaths(out).evidence}")
    raise typer.Exit(0 if prov.status == "succeeded" else 3)


def _rescore_command(task_dir: Path, trial: Path, judge_model: str | None) -> str:
    return f"workbench score {task_dir} --trial {trial}" + (f" --judge-model {judge_model}" if judge_model else "")


@app.command("score")
def score_cmd(task_dir: Path = TASK_DIR, trial: Path = typer.Option(..., "--trial", help="Trial directory.",
                                                                   **EXISTING_DIR),
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
    from ..paths import TrialPaths, run_of
    from ..scoring import score_trial
    from ..store import Store
    from ..task import load_task
    from .terminal import score_lines

    only = {x.strip() for x in only_leaves.split(",") if x.strip()} if only_leaves else None
    run = run_of(trial)
    store = Store.for_run(run, db) if db and run is not None else None
    scores = score_trial(load_task(task_dir), trial, judge=judge_settings(judge_model), only_leaves=only,
                         store=store, force=force)
    if as_json:
        typer.echo(scores.model_dump_json(indent=2))
        return
    echo_lines(score_lines(scores, _rescore_command(task_dir, trial, judge_model), leaves=leaves))
    typer.echo(f"scores: {TrialPaths(trial).scores}")


@app.command("run")
def run_cmd(
    task_dir: Path = TASK_DIR,
    agent: str = typer.Option(..., "--agent", help=(
        "Agent: openai, cli, replay, oracle, nop, refuse, or human (you, in a shell in the session's sandbox: "
        "this terminal is attached)."),),
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
    sandbox: str = typer.Option("bwrap", "--sandbox", help=SANDBOX_HELP, callback=sandbox_name),
    force: bool = typer.Option(False, "--force", help="Replace this attempt's trial if OUT already has it."),
    leaves: bool = typer.Option(False, "--leaves", help=LEAVES_HELP),
):
    """One trial end to end: agent session -> clean replay -> scoring -> review queue."""
    from ..batch.matrix import AgentConfig
    from ..paths import RunPaths
    from ..scoring.results import read_scores
    from ..task import load_task
    from ..trial.pipeline import run_single, trial_id
    from .terminal import score_lines

    task = load_task(task_dir)
    config = AgentConfig(name=name or agent, agent=agent, model=model, options=key_values(option),
                         time_scale=time_scale, max_turns=max_turns, max_cost_usd=max_cost)
    tp = RunPaths(out).trial(trial_id(task.id, config.name, attempt))
    trial = partial(run_single, task, config, out, attempt=attempt, replace=force, say=echo_err, engine=engine,
                    timeout=timeout, sandbox=sandbox, judge=public_judge(judge_model), progress=stage_line)
    try:
        record = trial() if agent != "human" else attached(trial, tp)
    except KeyboardInterrupt:
        echo_err(f"interrupted: trial {tp.root} marked interrupted; the same command runs it again")
        raise typer.Exit(130) from None
    typer.echo(f"trial: {tp.root}")
    typer.echo(f"delivery {record.outcome['delivery']}, replay {record.outcome['replay']}")
    scores = read_scores(tp, required=True)
    echo_lines(score_lines(scores, _rescore_command(task_dir, tp.root, judge_model), leaves=leaves))
    typer.echo(f"scores: {tp.scores}")
    if engine == "papermill":
        typer.echo(f"notebooks: {tp.notebooks}")


def attached(trial, tp):
    """Run ``trial`` beside this terminal, attached to the person's session as soon as its shell waits."""
    import threading

    from ..agents.terminal import attach

    done: dict = {}

    def work() -> None:
        try:
            done["record"] = trial()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            done["error"] = exc

    worker = threading.Thread(target=work, name="trial", daemon=True)
    worker.start()
    while worker.is_alive() and not tp.terminal_door.is_file():
        worker.join(0.2)
    if tp.terminal_door.is_file():
        echo_err("attached: you are the agent; `finish` ends the session")
        attach(json.loads(tp.terminal_door.read_text())["socket"])
    worker.join()
    if "error" in done:
        raise done["error"]
    return done["record"]


@app.command("attach")
def attach_cmd(run: Path = typer.Argument(..., exists=True, resolve_path=True,
                                          help="A run (its first waiting session) or one trial."),
               name: str | None = typer.Option(None, "--name", help="Who you are (recorded with the session).")):
    """Attach this terminal to a person's session (``--agent human``) that waits or runs in RUN (a run, a
    discovery run or one trial): the one for ``--name`` where a configuration names that person, else the first."""
    from ..agents.terminal import attach, waiting

    found = waiting(run, name)
    if not found:
        echo_err(f"no person's session waits in {run}: start one with --agent human (run, batch, class)")
        raise typer.Exit(1)
    door = json.loads((found[0] / "session" / "terminal.json").read_text())
    echo_err(f"attached to {found[0].name}: you are the agent; `finish` ends the session")
    attach(door["socket"], name=name)


@app.command("class")
def class_cmd(
    task_dir: Path = TASK_DIR,
    student: list[str] = typer.Option(..., "--student", help="A student's name (the option once per student)."),
    out: Path = typer.Option(..., "--out", resolve_path=True, help="The class's run directory (an existing one "
                                                                     "resumes)."),
    compare: Path | None = typer.Option(None, "--compare", exists=True, dir_okay=False, resolve_path=True,
                                        help="A matrix whose configurations the students are compared with."),
    workers: int = typer.Option(2, "--workers", min=1, help="Sessions at once (an open shell holds its task's cores)."),
):
    """A class on one task: a session per student (you are the agent, scored as a model is) beside the models of
    --compare, gathered in one run, then its report (OUT/report.html). Students attach with `workbench attach OUT
    --name NAME`, or from `workbench view`'s trial page in a browser."""
    from ..analysis.report import build_report
    from ..batch.run import run_batch
    from ..teaching.classroom import class_matrix, write_matrix
    from ..view.pages import REPORT

    out.mkdir(parents=True, exist_ok=True)
    matrix = write_matrix(class_matrix(task_dir, student, compare), out.parent / f"{out.name}.class.toml")
    echo_err(f"class matrix: {matrix}")
    for name in student:
        echo_err(f"  {name}: workbench attach {out} --name {json.dumps(name.strip())}")
    echo_err(f"  or in a browser: workbench view {out.parent}  (each student's trial page has their terminal)")
    result = run_batch(matrix, out, workers=workers, resume=(out / "run.json").is_file())
    typer.echo(f"run: {out} ({', '.join(f'{k} {v}' for k, v in sorted(result.counts.items()))})")
    typer.echo(f"report: {build_report(out, out / REPORT)}")


@app.command("demo")
def demo_cmd(out: Path = typer.Option(Path("runs/demo"), "--out", resolve_path=True,
                                      help="The demo's run folder (its trials are replaced, its reviews kept)."),
             engine: str = typer.Option("papermill", "--engine", help="papermill or inline."),
             judge_model: str | None = typer.Option(None, "--judge-model", help=JUDGE_HELP)):
    """Run the bundled demo task (PySCF H2 curve) with the oracle and nop agents; no API key needed."""
    from ..paths import RunPaths
    from ..teaching.demo import run_demo

    records = run_demo(out, engine=engine, judge=public_judge(judge_model), say=echo_err)
    typer.echo(f"\n{'agent':<8}{'R':>8}{'full':>7}{'coverage':>10}  trial")
    for rec in records:
        o = rec.outcome
        typer.echo(f"{rec.config.agent:<8}{o['R']:>8.4f}{str(o['full']).lower():>7}{o['coverage']:>10.3f}  "
                   f"{RunPaths(out).trial(rec.id).root}")
    typer.echo(f"\nscores: {out}/trials/<trial>/scores.json   evidence: {out}/trials/<trial>/evidence/")
    if engine == "papermill":
        typer.echo(f"notebooks: {out}/trials/<trial>/notebooks/ (open them in JupyterLab)")
    awaiting = sum(rec.outcome.get("awaiting_review", 0) for rec in records)
    if awaiting:
        typer.echo(f"{awaiting} leaves await review (no judge configured: --judge-model, or an expert)")


@app.command("tour")
def tour_cmd(out: Path = typer.Option(Path("reports/tour.html"), "--out", resolve_path=True,
                                      help="The HTML page to write."),
             work_dir: Path | None = typer.Option(None, "--work-dir", resolve_path=True,
                                                  help="Where the tour's runs go (default: beside --out, in "
                                                       "tour-runs/).")):
    """Execute the guided tour notebook (notebooks/tour.ipynb) and render it as offline HTML."""
    from ..teaching.tour import build_tour

    path = build_tour(out, work_dir=work_dir, progress=True)
    typer.echo(f"tour: {path} (executed notebook: {path.with_suffix('.ipynb')})")


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
                                       callback=sandbox_name),
):
    """Run every (task, configuration, attempt) of a matrix; resumable, each outcome exactly once.

    The LLM judge is the matrix's `judge_model` (its endpoint and key come from the environment)."""
    from ..batch.run import run_batch, summary_rows

    slurm = {"partition": partition, "walltime": walltime, "lifetime": lifetime, "lifetime_stagger": lifetime_stagger}
    res = run_batch(matrix, out, executor=executor, workers=workers, scheduler=scheduler, resume=resume,
                    rerun_status=tuple(rerun_status), engine=engine, sandbox=sandbox, slurm=slurm)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(res.counts.items()) if v)
    typer.echo(f"{res.total} trials ({counts})" + (f" on {res.executor}" if res.executor else ""))
    typer.echo(f"\n{'config':<20}{'trials':>7}{'complete':>9}{'infra':>7}{'mean R':>10}{'full':>6}"
               f"{'provisional':>12}{'withheld':>9}")
    rows = summary_rows(res.out)
    for r in rows:
        mean = "-" if r["mean_R"] is None else ("≥" if r["provisional"] else "") + f"{r['mean_R']:.4f}"
        typer.echo(f"{r['config']:<20}{r['trials']:>7}{r['complete']:>9}{r['infra_error']:>7}{mean:>10}{r['full']:>6}"
                   f"{r['provisional']:>12}{r['withheld']:>9}")
    if any(r["provisional"] or r["withheld"] for r in rows):
        typer.echo("≥: outcomes await review (R so far, a lower bound); withheld: a judge or workbench failure, "
                   "left out of the mean until `workbench score TASK --trial T` rescores it")
    typer.echo(f"\nresults: {res.out / 'results.db'}   trials: {res.out / 'trials'}")
    if res.interrupted:
        echo_err(f"interrupted: continue with `workbench batch {matrix} --out {out} --resume`")
        raise typer.Exit(130)


@app.command("discover")
def discover_cmd(
    task_dir: Path = TASK_DIR,
    agent: str = typer.Option(..., "--agent", help="The sessions' agent: openai, cli, ..."),
    out: Path = typer.Option(..., "--out", resolve_path=True, help="Run directory (an existing run resumes)."),
    model: str | None = typer.Option(None, "--model", help="Model name passed to the agent."),
    option: list[str] = typer.Option([], "--option", "-o", help="Agent option KEY=VALUE (VALUE may be JSON)."),
    propose_agent: str | None = typer.Option(None, "--propose-agent", help="The propose sessions' agent."),
    propose_model: str | None = typer.Option(None, "--propose-model", help="The propose sessions' model."),
    rounds: int | None = typer.Option(None, "--rounds", min=1,
                                      help="R: propose -> implement rounds (default 3; more extend a resumed run)."),
    parallel: int = typer.Option(2, "--parallel", min=1, help="K: implement sessions per round, in parallel."),
    prepare_min: float | None = typer.Option(None, "--prepare-min", help="Minutes for the prepare session [10]."),
    propose_min: float | None = typer.Option(None, "--propose-min", help="Minutes for each propose session [10]."),
    implement_min: float | None = typer.Option(None, "--implement-min",
                                               help="Minutes for each implement session [30]."),
    cost_limit: float | None = typer.Option(None, "--cost-limit", help="USD across all sessions; the run stops there."),
    extend: float | None = typer.Option(None, "--extend", min=0, help=(
        "Minutes more for a session that runs out of time before its deliverable (continued once, from where it "
        "stopped) [0: never].")),
    sandbox: str = typer.Option("bwrap", "--sandbox", help=SANDBOX_HELP, callback=sandbox_name),
):
    """EurekAgent's loop on a discovery task: prepare, then (propose, K parallel implement) x R, each a sandboxed
    session with the hidden scoring service; the ranked history after every round; the best replayed at the end."""
    from ..batch.matrix import AgentConfig
    from ..discovery import discover
    from ..discovery.records import Limits

    opts = key_values(option)
    config = AgentConfig(name=agent, agent=agent, model=model, options=opts)
    proposer = AgentConfig(name=propose_agent, agent=propose_agent, model=propose_model or model, options=opts) \
        if propose_agent else None

    def sec(minutes: float | None) -> float | None:
        return None if minutes is None else minutes * 60

    given = {"prepare_sec": sec(prepare_min), "propose_sec": sec(propose_min), "implement_sec": sec(implement_min),
             "cost_usd": cost_limit, "extend_sec": sec(extend)}
    # only what is given: a resumed run keeps its own limits otherwise (--implement-min 60 extends that phase)
    limits = Limits(**{k: v for k, v in given.items() if v is not None})
    try:
        state = discover(task_dir, config, out, rounds=rounds, parallel=parallel, propose_agent=proposer,
                         limits=limits, sandbox=sandbox, say=echo_err)
    except KeyboardInterrupt:
        echo_err(f"interrupted: {out}/discovery.json keeps the run's state; the same command resumes it")
        raise typer.Exit(130) from None
    final = state.final or {}
    typer.echo(f"run: {out}")
    typer.echo(f"history: {out / 'history.md'}")
    if final.get("status") == "scored":
        typer.echo(f"best: {final['session']}, replayed: {final['metric']} (valid {final['valid']}, "
                   f"R = {final['R']:.4f}): {final['trial']}")
    else:
        typer.echo(f"best: {final.get('status', 'none')}")
    if state.stopped:
        typer.echo(f"stopped: {state.stopped}")


@app.command("discover-message")
def discover_message_cmd(out: Path = typer.Argument(..., help="The discovery run directory."),
                         session: str = typer.Argument(..., help="A running session's id (r1-i2, ...)."),
                         text: str = typer.Argument(..., help="The message.")):
    """Send a message to a running session of a discovery run (the agent reads it on its next turn and the
    trajectory records it), or answer the prepare session's questions while the run waits (SESSION: prepare)."""
    from ..discovery import send_message

    inbox = send_message(out, session, text)
    typer.echo(f"sent to {session}: {inbox}")


@app.command("discover-pause")
def discover_pause_cmd(out: Path = typer.Argument(..., help="The discovery run directory."),
                       off: bool = typer.Option(False, "--off", help="End the pause.")):
    """Pause a discovery run: sessions running finish, no new one starts until `--off`."""
    from ..discovery import set_paused

    was = set_paused(out, not off)
    typer.echo(("paused" if not off else "resumed" if was else "was not paused") + f": {out}")


@app.command("trajectory")
def trajectory_cmd(trial: Path = TRIAL, fmt: str = typer.Option("atif", "--format", help="atif (Harbor ATIF v1.8)."),
                   out: Path | None = typer.Option(None, "--out", resolve_path=True,
                                                   help="Write here instead of stdout.")):
    """Export a trial's agent trajectory (session/trajectory.jsonl) to another format."""
    from ..io import atomic_write_json
    from ..paths import TrialPaths
    from ..trajectory import to_atif

    if fmt != "atif":
        raise WorkbenchError(unknown("trajectory format", fmt, ["atif"]))
    if not TrialPaths(trial).trajectory.is_file():
        raise WorkbenchError(f"{trial}: no session/trajectory.jsonl (not a trial directory?)")
    data = to_atif(trial)
    if out:
        atomic_write_json(out, data)
        typer.echo(f"wrote {out} ({len(data['steps'])} steps)")
    else:
        typer.echo(json.dumps(data, indent=2))
