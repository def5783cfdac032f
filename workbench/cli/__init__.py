"""`workbench`: one verb per stage, plus task/rubric/env helpers. It parses and prints; the work is the
library's.

Problems with the user's input are printed as ``error: ...`` lines and exit 1; they never show a
traceback. The verbs live in modules by what they act on: :mod:`.tasks` (task packages, rubrics,
environments), :mod:`.trials` (replay, score, run, demo, tour, batch, trajectory), :mod:`.review` (expert
review, the judge against it), :mod:`.runs` (report, view, index, export).
"""

from __future__ import annotations

import logging
import sys

import typer

from ..errors import ValidationProblem, WorkbenchError
from . import review, runs, tasks, trials
from .common import echo_err

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Replay-grounded evaluation of AI agents that reproduce published science.")
app.add_typer(trials.app)
app.add_typer(review.app)
app.add_typer(runs.app)
app.add_typer(tasks.task_app, name="task")
app.add_typer(tasks.rubric_app, name="rubric")
app.add_typer(tasks.env_app, name="env")
app.add_typer(runs.export_app, name="export")
app.add_typer(review.review_app, name="review")


def _print_version(value: bool) -> None:
    if value:
        from ..version import __version__

        typer.echo(f"workbench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what each stage does (also accepted "
                                       "after the verb)."),
          version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")


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

    hints = {errno.ENOSPC: "free some space", errno.EDQUOT: "free some space",
             errno.ENOTDIR: "a part of the path is a file, not a folder", errno.EISDIR: "a folder, not a file",
             errno.ENAMETOOLONG: "choose a shorter path", errno.ELOOP: "the path's links go round in a circle"}
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, *hints):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror} ({hints.get(exc.errno, 'the workbench must write there')})"
    if isinstance(exc, SQLAlchemyError):
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        return f"results store: {cause}"
    return None


def main() -> None:
    from pydantic import ValidationError

    from ..errors import pydantic_problems

    try:
        app(args=hoist_verbose(sys.argv[1:]))
    except SystemExit as exc:
        if exc.code == 130 and _from_ctrl_c(exc):  # typer exits 130 on Ctrl-C without a word
            echo_err("interrupted")
        raise
    except ValidationError as exc:  # a model built from command-line options
        for p in pydantic_problems("options", exc):
            echo_err(f"error: {p}")
        sys.exit(1)
    except ValidationProblem as exc:
        for p in exc.problems:
            echo_err(f"error: {p}")
        sys.exit(1)
    except WorkbenchError as exc:
        echo_err(f"error: {exc}")
        sys.exit(1)
    except Exception as exc:
        problem = environment_problem(exc)
        if problem is None:
            raise  # a traceback means a bug in the workbench
        echo_err(f"error: {problem}")
        sys.exit(1)


def _from_ctrl_c(exc: BaseException) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
