"""The verbs that read runs: `report`, `view`, `lab`, `index`, and `export ...` (other tools' formats)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import WorkbenchError
from .common import EXISTING_DIR, RUN_DIR

app = typer.Typer()
export_app = typer.Typer(no_args_is_help=True, help="A run in other tools' formats: Inspect AI logs, PaperBench trees.")

EXPORT_OUT = typer.Option(..., "--out", resolve_path=True, help="Directory to write into (created).")
# checked by the exporter, so a wrong path is one `error:` line whatever is wrong with it
TRIAL_OR_RUN = typer.Argument(..., help="A trial directory, or a run directory (every trial).", resolve_path=True)


@app.command("report")
def report_cmd(runs_dir: Path = typer.Argument(..., help="A run or a directory of runs.", **EXISTING_DIR),
               out: Path = typer.Option(..., "--out", resolve_path=True, help="The HTML file to write (the executed "
                                                                            "notebook is kept beside it)."),
               title: str | None = typer.Option(None, "--title", help="The report's title (default: the folder's "
                                                "name)."),
               static: bool = typer.Option(False, "--static", help="Matplotlib PNGs instead of interactive plotly.")):
    """Aggregate the runs under RUNS_DIR (or one run) into an offline HTML report (papermill + nbconvert)."""
    from ..analysis.report import build_report

    path = build_report(runs_dir, out, title=title, static=static)
    typer.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB) and {path.with_suffix('.ipynb')}")


@app.command("view")
def view_cmd(runs_dir: Path = typer.Argument(Path("runs"), help="A run or a directory of runs.", **EXISTING_DIR),
             port: int = typer.Option(8765, "--port", help="Port on 127.0.0.1 (0: any free port)."),
             review_url: str | None = typer.Option(None, "--review-url", help="The reviewer's URL (`workbench "
                                                   "review serve`), to link each leaf to it.")):
    """Browse runs and trials in a local web app on 127.0.0.1; it refreshes while a batch runs."""
    from ..view.server import ViewServer

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


@app.command("lab")
def lab_cmd(run_dir: Path | None = typer.Argument(None, help="A run directory (default: JupyterLab on the current "
                                                  "directory).", **EXISTING_DIR),
            port: int = typer.Option(8888, "--port", help="The port to ask for; when it is taken JupyterLab binds "
                                     "the next free one (printed).")):
    """JupyterLab on a run, on 127.0.0.1 with a token: the run's reviewer (review.ipynb), its analysis notebook
    (analysis.ipynb) and each trial's stage notebooks one click away. Ctrl-C stops it and its kernels."""
    import sys

    from ..review.lab import serve_lab

    code = serve_lab(run_dir, port, log=sys.stderr,
                     on_ready=lambda url: typer.echo(f"JupyterLab on {run_dir or Path.cwd()} at {url} "
                                                     "(Ctrl-C stops it)"))
    typer.echo("JupyterLab stopped" if code == 0 else f"JupyterLab exited with status {code}")
    raise typer.Exit(code)


@app.command("index")
def index_cmd(run_dir: Path = RUN_DIR, db: str | None = typer.Option(None, "--db", help="SQLAlchemy URL (default: "
                                                                              "RUN_DIR/results.db).")):
    """(Re)build the results index from a run's trial directories."""
    from ..paths import RunPaths
    from ..store import Store

    if not RunPaths(run_dir).trials.is_dir():
        raise WorkbenchError(f"{run_dir}: no trials/ directory (not a run directory)")
    store = Store(db) if db else Store.for_run(run_dir)
    n = store.rebuild(run_dir)
    typer.echo(f"indexed {n} trial(s) into {db or RunPaths(run_dir).results_db}")


@export_app.command("inspect")
def export_inspect_cmd(run_dir: Path = TRIAL_OR_RUN, out: Path = EXPORT_OUT):
    """Inspect AI eval logs (JSON), one per configuration x task; open them with `inspect view --log-dir OUT`."""
    from ..export.inspect_log import export_inspect

    written = export_inspect(run_dir, out)
    typer.echo(f"wrote {len(written)} Inspect logs to {out}   (inspect view --log-dir {out})")


@export_app.command("paperbench")
def export_paperbench_cmd(path: Path = TRIAL_OR_RUN, out: Path = EXPORT_OUT):
    """PaperBench graded task trees, one <trial-id>.json per scored trial; each root's score is the trial's R."""
    from ..export.paperbench import export_paperbench

    written = export_paperbench(path, out)
    typer.echo(f"wrote {len(written)} graded task trees to {out}")
