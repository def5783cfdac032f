"""`workbench review ...` and `workbench judge-eval`: expert review of leaves, and the judge against it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from ..errors import WorkbenchError
from .common import JSON_HELP, RUN_DIR, TRIAL, run_store

review_app = typer.Typer(no_args_is_help=True, help="Expert review of leaves.")
app = typer.Typer()  # judge-eval, a top-level verb

LEAF = typer.Argument(..., help="A leaf id of the trial's rubric (e.g. C9).")
LEAF_SCORE = typer.Argument(..., help="The leaf's score: 0 or 1 (binary leaves), or in [0, 1] (continuous).")
COMMENT = typer.Option("", "--comment", help="Why (recorded with the review).")
DB_OPTION = typer.Option(None, "--db", help="SQLAlchemy URL of the results store (default: WORKBENCH_STORE_URL, "
                                            "else RUN_DIR/results.db).")


def _echo_review(rec: dict, leaf: str, score: float, who: str) -> None:
    status = rec["leaf_status"] + ("" if rec["leaf_score"] is None else f" {rec['leaf_score']:g}")
    typer.echo(f"review {rec['review_id']}: {rec['trial_id']} {leaf}: {rec['previous_score']} -> {score} by {who}; "
               f"leaf {status}; R {rec['R_before']:.4f} -> {rec['R']:.4f}")


def _trial_store(trial: Path, db: str | None):
    from ..paths import run_of
    from ..store import Store

    run = run_of(trial)
    if run is None:
        raise WorkbenchError(f"{trial} is not inside a run directory (RUN/trials/TRIAL); reviews live in a run's store")
    return Store.for_run(run, db)


@review_app.command("set")
def review_set_cmd(trial: Path = TRIAL, leaf: str = LEAF, score: float = LEAF_SCORE,
                   reviewer: str = typer.Option(..., "--reviewer", help="Who reviews (recorded)."),
                   comment: str = COMMENT, db: str | None = DB_OPTION):
    """Record an expert's score for one leaf of a trial (append-only); scores.json and R are recomputed."""
    from ..review.records import record_review

    rec = record_review(trial, leaf, score, reviewer=reviewer, comment=comment, store=_trial_store(trial, db))
    _echo_review(rec, leaf, score, reviewer)


@review_app.command("adjudicate")
def review_adjudicate_cmd(trial: Path = TRIAL, leaf: str = LEAF, score: float = LEAF_SCORE,
                          reviewer: str = typer.Option(..., "--reviewer", help="Who decides (recorded)."),
                          comment: str = COMMENT, db: str | None = DB_OPTION):
    """The final decision on a leaf (usually a disputed one); it outranks every review."""
    from ..review.records import record_review

    rec = record_review(trial, leaf, score, reviewer=reviewer, comment=comment, kind="adjudication",
                        store=_trial_store(trial, db))
    _echo_review(rec, leaf, score, reviewer)


@review_app.command("configure")
def review_configure_cmd(run_dir: Path = RUN_DIR, reviewers_required: int = typer.Option(
        ..., "--reviewers-required", help="Independent reviewers per leaf before their verdict counts."),
        db: str | None = DB_OPTION):
    """Set how many independent reviewers a run requires; reviewed trials are re-decided at once."""
    from ..review import set_reviewers_required

    n = set_reviewers_required(run_dir, reviewers_required, run_store(run_dir, db))
    typer.echo(f"{run_dir}: {reviewers_required} reviewer(s) per leaf; {n} reviewed trial(s) re-decided")


@review_app.command("agreement")
def review_agreement_cmd(run_dir: Path = RUN_DIR, as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
                         db: str | None = DB_OPTION):
    """Agreement between independent reviewers: percent agreement and Cohen's kappa, per task and overall."""
    from ..review import agreement

    res = agreement(run_store(run_dir, db), Path(run_dir).resolve().name)
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
    from ..review import awaiting_review
    from .terminal import awaiting_table

    typer.echo("\n".join(awaiting_table(awaiting_review(run_dir, run_store(run_dir, db)))))


@review_app.command("queue")
def review_queue_cmd(run_dir: Path = RUN_DIR, db: str | None = DB_OPTION):
    """Leaves whose independent reviewers disagree (awaiting adjudication), and stale reviews: reviews of
    other evidence than the trial holds now (a re-run), which are never applied."""
    from ..review import disputes
    from ..review.records import stale_reviews

    store = run_store(run_dir, db)
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
    from ..review.serve import serve

    code = serve(run_dir, port, db, log=sys.stderr,
                 on_ready=lambda url: typer.echo(f"reviewer for {run_dir} at {url} (Ctrl-C stops it)"))
    typer.echo("reviewer stopped" if code == 0 else f"reviewer exited with status {code}")
    raise typer.Exit(code)


@app.command("judge-eval")
def judge_eval_cmd(run_dir: Path = RUN_DIR, as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
                   db: str | None = DB_OPTION):
    """The judge's verdicts against expert reviews of the same leaves and evidence: accuracy, macro F1, kappa."""
    from ..review.judge_eval import judge_eval

    res = judge_eval(run_dir, run_store(run_dir, db))
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
