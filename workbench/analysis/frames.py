"""Tidy frames from results indexes, and the outcome rules of PaperBenchX §4.1.

An **outcome** is one (configuration, task, attempt) of the shared set: every task and attempt seen for
any configuration, for every configuration. Its state and what it counts for:

==============  ===================================================  ==========================
state           meaning                                              counts in partial score
==============  ===================================================  ==========================
final           scored, every leaf decided                           R
provisional     scored, some leaves pending review or disputed       R so far, a lower bound;
                                                                     shown with ``R_upper`` (all
                                                                     of them pass)
refused         the model refused and no fallback delivered          0 (PaperBenchX §4.1)
missing         no trial for it (never run)                          0 (PaperBenchX §4.1)
unfinished      a trial still running                                0, and reported as such
needs_rescoring scored, but a leaf (or the sota evaluator) was       withheld: not counted,
                withheld: the judge endpoint or the workbench        listed (rescore it)
                failed
infra_error     the workbench, sandbox or endpoint failed            withheld: not counted, listed
==============  ===================================================  ==========================

Withheld outcomes (:data:`WITHHELD_STATES`) were never the submission's fault, so they are left out of
every mean, rate and table, never scored 0 and never scored on what survived the failure. A refusal
that a fallback configuration replaced scores the fallback's submission, and still counts in the
refusal rate. When a (configuration, task, attempt) appears in several runs, the latest finished one is
used; runs are merged only when a configuration name means the same configuration in all of them
(:func:`check_configurations`), else "model-A" of one run would be averaged with another "model-A".
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..paths import RunPaths
from ..store import Store

log = logging.getLogger(__name__)

PHASE_SHARES = ("modeling_share", "execution_share", "validation_share")
COUNTED_STATES = ("final", "provisional", "refused", "missing", "unfinished")
WITHHELD_STATES = ("infra_error", "needs_rescoring")
ZERO_STATES = ("refused", "missing", "unfinished")  # count 0 (PaperBenchX §4.1)
MODE_RESULTS = ("sota_g", "sota_band", "qa_oeq", "qa_mcq_accuracy")
# the trials columns :func:`outcomes` and the report's metrics read: a report reads these and no other
ANALYSED = {"trials": (
    "run", "trial_id", "task", "field", "domain", "scoring", "config", "agent", "model", "attempt", "status",
    "refused", "fallback_used", "R", "full", "final", "R_upper", "full_upper", "needs_rescoring", *PHASE_SHARES,
    "uncounted_weight", "turns", "agent_seconds", "input_tokens", "output_tokens", "agent_cost_usd", *MODE_RESULTS,
    "session_seconds", "replay_seconds", "score_seconds", "review_seconds", "score_checks_seconds",
    "score_judge_seconds", "score_other_seconds", "judge_calls", "activity_seconds", "finished_at", "error")}


def _is_run(run: RunPaths) -> bool:
    return run.trials.is_dir() or run.results_db.is_file()


def run_dirs(root: Path | str) -> list[Path]:
    """``root`` itself when it is a run, else the runs directly inside it."""
    root = Path(root)
    if _is_run(RunPaths(root)):
        return [root]
    if not root.is_dir():
        from ..errors import WorkbenchError

        raise WorkbenchError(f"{root}: not a directory")
    return sorted(d for d in root.iterdir() if _is_run(RunPaths(d)))


def run_configs(run_dir: Path | str) -> dict[str, dict]:
    """A run's configurations by name, as recorded: a batch's matrix or `workbench run`'s ``configs`` in
    run.json, else each trial's trial.json (a run made by the library); unset fields take their defaults."""
    from ..batch.matrix import AgentConfig
    from ..batch.run_spec import read_run_spec
    from ..errors import WorkbenchError
    from ..io import read_json

    run = RunPaths(Path(run_dir))
    try:
        spec = read_run_spec(run)
    except WorkbenchError as exc:  # the trials still say how they were configured
        log.warning("%s", exc)
        spec = None
    found = spec.configurations if spec else {}
    if not found and run.trials.is_dir():
        for d in sorted(run.trials.iterdir()):
            try:
                cfg = read_json(run.trial(d.name).trial_json).get("config") or {}
            except (OSError, ValueError, AttributeError):
                continue
            if "name" in cfg:
                found.setdefault(cfg["name"], cfg)
    return {n: AgentConfig.model_construct(**{**c, "name": n}).model_dump() for n, c in found.items()}


def check_configurations(runs: list[Path]) -> None:
    """Refuse to merge runs in which one configuration name stands for different configurations."""
    from ..errors import WorkbenchError

    seen: dict[str, tuple[str, dict]] = {}
    for run in runs:
        for name, cfg in run_configs(run).items():
            first, old = seen.setdefault(name, (run.name, cfg))
            if old != cfg:
                fields = ", ".join(f"{k}: {old.get(k)!r} vs {cfg.get(k)!r}" for k in sorted(set(old) | set(cfg))
                                   if old.get(k) != cfg.get(k))
                raise WorkbenchError(f"configuration {name!r} differs between runs {first} and {run.name} ({fields}); "
                                     "a report would merge them: report each run on its own, or rename one")


def _store_current(store: Store, run: RunPaths) -> None:
    """Index a run whose trial directories are not (all) in its store yet; a synthetic run has none."""
    if not run.trials.is_dir():
        return
    dirs = sum(1 for d in run.trials.iterdir() if run.trial(d.name).trial_json.is_file())
    if dirs and len(store.trial_ids(run.root.name)) < dirs:
        store.rebuild(run.root)


def _stores(runs: list[Path], url: str | None):
    """Each run's store, its index brought up to date with its trial directories."""
    for d in runs:
        store = Store.for_run(d, url)
        _store_current(store, RunPaths(d))
        try:
            yield d, store
        finally:
            store.db.dispose()


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def load_index(root: Path | str, url: str | None = None, tables: tuple[str, ...] = ("trials", "activity_time"),
               columns: dict[str, tuple[str, ...]] | None = None) -> dict[str, pd.DataFrame]:
    """Tables of the results index of every run under ``root``.

    Args:
        root: a run or a directory of runs.
        url: a shared results store's SQLAlchemy URL (default: each run's results.db).
        tables: the tables to read (``leaf_scores`` too when asked: ~40 rows per outcome).
        columns: table -> the only columns to read of it (the report reads :data:`ANALYSED`).

    Returns:
        Table name -> DataFrame, the runs' rows concatenated.
    """
    frames: dict[str, list[pd.DataFrame]] = {t: [] for t in tables}
    runs = run_dirs(root)
    check_configurations(runs)
    for d, store in _stores(runs, url):
        for name in frames:
            frames[name].append(store.frame(name, run=d.name, columns=(columns or {}).get(name)))
    return {k: _concat(v) for k, v in frames.items()}


def sample_per_config(frame: pd.DataFrame, per_config: int | None, seed: int = 0) -> pd.DataFrame:
    """At most ``per_config`` rows of each configuration, drawn with ``seed`` (all of them when ``per_config``
    is None or 0): how time allocation samples trajectories (PaperBenchX samples 50 per model)."""
    parts = [g.sample(per_config, random_state=seed) if per_config and len(g) > per_config else g
             for _, g in frame.groupby("config", sort=True)]
    return pd.concat(parts) if parts else frame


def activity_sample(root: Path | str, outcomes: pd.DataFrame, per_config: int | None = 50, seed: int = 0,
                    url: str | None = None) -> pd.DataFrame:
    """The ``activity_time`` rows of the trajectories :func:`.metrics.time_allocation` samples (the same
    draw, from the trials with coded activity: ``activity_seconds`` set), read for those trials only: at
    100 attempts a study holds ~10^5 trajectories and the report looks at ``per_config`` of each."""
    coded = outcomes.loc[outcomes["activity_seconds"].notna() & outcomes["trial_id"].notna(),
                         ["run", "trial_id", "config"]].sort_values(["run", "trial_id"])
    picked = sample_per_config(coded, per_config, seed)
    rows = [store.frame("activity_time", d.name, trial_ids=picked.loc[picked.run == d.name, "trial_id"].tolist())
            for d, store in _stores(run_dirs(root), url)]
    return _concat(rows) if rows else pd.DataFrame(columns=["run", "trial_id", "activity", "seconds"])


def _latest(trials: pd.DataFrame) -> pd.DataFrame:
    order = trials.assign(_done=trials["finished_at"].fillna("")).sort_values("_done")
    return order.drop_duplicates(["config", "task", "attempt"], keep="last").drop(columns="_done")


def _true(x) -> bool:
    """A stored boolean that may be missing (NaN/None) or come back from SQL as 0/1."""
    return x is not None and not (isinstance(x, float) and np.isnan(x)) and bool(x)


def _flag(values: pd.Series) -> pd.Series:
    """Stored booleans (bools, 0/1 from SQL, None/NaN where not stored) as a nullable boolean series."""
    unset = values.isna()
    return pd.Series(values.where(~unset, False).to_numpy(dtype=object).astype(bool), index=values.index,
                     dtype="boolean").mask(unset)


def _states(o: pd.DataFrame) -> pd.Series:
    """Each outcome's state (the table above), decided for all rows at once: a report reads ~10^5 of them."""
    status = o["status"]
    known = status.map(lambda s: isinstance(s, str))
    is_true = {c: _flag(o[c]).fillna(False).to_numpy(dtype=bool) for c in ("refused", "needs_rescoring", "final")}
    no_fallback = ~o["fallback_used"].map(lambda s: isinstance(s, str)).to_numpy(dtype=bool)
    rules = [  # first match wins
        (~known.to_numpy(dtype=bool), "missing"),
        (status.isin(["running", "interrupted"]).to_numpy(), "unfinished"),
        ((status == "infra_error").to_numpy(), "infra_error"),
        (is_true["refused"] & no_fallback, "refused"),  # the model's own doing: 0 whatever the scorer could not finish
        (is_true["needs_rescoring"], "needs_rescoring"),
        (is_true["final"], "final"),
    ]
    return pd.Series(np.select([m for m, _ in rules], [s for _, s in rules], "provisional"), index=o.index)


# columns an older index (or a hand-made frame) may lack; read as "not stored"
OPTIONAL = ("full", "R_upper", "full_upper", "needs_rescoring", "uncounted_weight", "error")


def outcomes(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per outcome of the shared set with ``state``, ``score`` (what counts toward the partial
    score: R, a lower bound while provisional; NaN when withheld), ``R_upper`` (if every uncounted leaf
    passed), ``is_full`` / ``full_upper`` (nullable: NA when withheld) and phase scores under the same
    rules. Full comes from the scorer's stored booleans; only rows without them are recomputed from R.

    Args:
        trials: the index's ``trials`` table (:func:`load_index`).

    Returns:
        The outcomes frame every metric of :mod:`workbench.analysis.metrics` takes.
    """
    from ..rubric import is_full

    cols = ["config", "task", "attempt"]
    if trials.empty:
        return pd.DataFrame(columns=[*cols, "state", "score", "R_upper", "is_full", "full_upper", *PHASE_SHARES])
    trials = trials.assign(**{c: None for c in OPTIONAL if c not in trials})
    t = _latest(trials)
    grid = pd.MultiIndex.from_product([sorted(t["config"].unique()), sorted(t["task"].unique()),
                                       sorted(t["attempt"].unique())], names=cols).to_frame(index=False)
    o = grid.merge(t, on=cols, how="left")
    for key, col in (("task", "field"), ("task", "domain"), ("task", "scoring"), ("config", "model"),
                     ("config", "agent")):
        known = t.dropna(subset=[col]).drop_duplicates(key).set_index(key)[col]
        o[col] = o[col].fillna(o[key].map(known)) if col in o else o[key].map(known)
    o["field"] = o["field"].fillna("unknown")
    o["state"] = _states(o)
    zero = o["state"].isin(ZERO_STATES)
    withheld = o["state"].isin(WITHHELD_STATES)
    r = o["R"].astype(float)
    # older rows have no R_upper: every uncounted leaf passing adds its weight (exact only without gates)
    upper = o["R_upper"].astype(float).fillna(r + o["uncounted_weight"].astype(float).fillna(0.0))
    o["score"] = r.mask(zero, 0.0).mask(withheld)
    o["R_upper"] = upper.mask(zero, 0.0).mask(withheld)
    for col in PHASE_SHARES:
        o[col] = o[col].astype(float).mask(zero, 0.0).mask(withheld)
    for col in MODE_RESULTS:  # a withheld outcome's sota / qa numbers are withheld with it
        if col in o:
            o[col] = o[col].mask(withheld)
    full, full_upper = _flag(o["full"]), _flag(o["full_upper"])
    full = full.fillna(r[full.isna()].map(is_full))  # exact comparisons, only where the scorer stored none
    full_upper = full_upper.fillna(upper[full_upper.isna()].map(is_full))
    o["is_full"] = full.mask(zero, False).mask(withheld, pd.NA)
    o["full_upper"] = full_upper.mask(zero, False).mask(withheld, pd.NA)
    o["hours"] = o["agent_seconds"].astype(float) / 3600.0
    o["tokens"] = o["input_tokens"].astype(float) + o["output_tokens"].astype(float)
    return o
