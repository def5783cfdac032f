"""workbench: replay-grounded evaluation of AI agents that reproduce published science.

The public API, the nouns a notebook author uses::

    import workbench as wb
    task = wb.load_task("tasks/h2-pes")
    record = wb.run_trial(task, wb.AgentConfig(name="oracle", agent="oracle"), Path("runs/try"))
    record.outcome["R"]                              # and runs/try/trials/<id>/scores.json: wb.Scores

Everything else is private by convention (import it from its module). Names are imported on first use,
so ``import workbench`` stays cheap for a stage notebook's kernel and the confined reader. No public name is
also a submodule's name: importing a submodule sets it on the package, so a function named like its package
(``wb.replay``) would be the function before any trial ran and the module after.
"""

from importlib import import_module

from .version import __version__

_NAMES = {
    # tasks and plans
    "Task": ".task", "load_task": ".task", "Rubric": ".rubric", "load_rubric": ".rubric",
    "AgentConfig": ".batch.matrix", "Matrix": ".batch.matrix", "load_matrix": ".batch.matrix",
    # running: one stage, one trial, a batch
    "run_session": ".session.run", "replay_trial": ".replay.trial", "score_trial": ".scoring",
    "run_trial": ".trial.pipeline", "run_batch": ".batch.run",
    # what a trial leaves
    "Scores": ".scoring", "LeafScore": ".scoring", "TrialRecord": ".trial.record", "read_trial": ".trial.record",
    "Evidence": ".evidence", "JudgeSettings": ".scoring.judge.settings",
    # review and analysis
    "Reviewer": ".review", "record_review": ".review", "load_index": ".analysis.frames",
    "outcomes": ".analysis.frames", "build_report": ".analysis.report",
}
__all__ = ["__version__", *sorted(_NAMES)]


def __getattr__(name: str):
    if name not in _NAMES:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    return getattr(import_module(_NAMES[name], __name__), name)


def __dir__() -> list[str]:
    return __all__
