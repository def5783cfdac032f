"""Tidy frames from results indexes, and the outcome rules of seed 001 §4.1.

An **outcome** is one (configuration, task, attempt) of the shared set: every task and attempt seen for
any configuration, for every configuration. Its state and what it counts for:

==============  ===================================================  =======================
state           meaning                                              counts in partial score
==============  ===================================================  =======================
final           scored, every leaf decided                           R
provisional     scored, some leaves pending review / withheld /      R so far (a lower bound;
                disputed                                             ``R_upper`` if they all pass)
refused         the model refused and no fallback delivered          0 (seed 001 §4.1)
missing         no trial for it (never run)                          0 (seed 001 §4.1)
unfinished      a trial still running                                0, and reported as such
infra_error     the workbench, sandbox or endpoint failed            withheld: not counted,
                                                                     reported
==============  ===================================================  =======================

A refusal that a fallback configuration replaced scores the fallback's submission, and still counts
in the refusal rate. When a (configuration, task, attempt) appears in several runs, the latest
finished one is used.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..paths import RunPaths
from ..store import Store

PHASE_SCORES = ("modeling_score", "execution_score", "validation_score")
COUNTED_STATES = ("final", "provisional", "refused", "missing", "unfinished")


def run_dirs(root: Path | str) -> list[Path]:
    """``root`` itself when it is a run, else the runs directly inside it."""
    root = Path(root)
    if (root / "trials").is_dir() or (root / "results.db").is_file():
        return [root]
    if not root.is_dir():
        from ..errors import WorkbenchError

        raise WorkbenchError(f"{root}: not a directory")
    return sorted(d for d in root.iterdir() if (d / "trials").is_dir() or (d / "results.db").is_file())


def _store_current(store: Store, run: RunPaths) -> None:
    """Index a run whose trial directories are not (all) in its store yet; a synthetic run has none."""
    if not run.trials.is_dir():
        return
    dirs = sum(1 for d in run.trials.iterdir() if (d / "trial.json").is_file())
    if dirs and len(store.trial_ids(run.root.name)) < dirs:
        store.rebuild(run.root)


def load_index(root: Path | str, url: str | None = None,
               tables: tuple[str, ...] = ("trials", "workflow_time")) -> dict[str, pd.DataFrame]:
    """Tables of the index (``leaf_scores`` too when asked: ~40 rows per outcome) of every run under ``root``."""
    frames: dict[str, list[pd.DataFrame]] = {t: [] for t in tables}
    for d in run_dirs(root):
        store = Store.for_run(d, url)
        _store_current(store, RunPaths(d))
        for name in frames:
            frames[name].append(store.frame(name, run=d.name))
        store.engine.dispose()
    return {k: pd.concat(v, ignore_index=True) if v else pd.DataFrame() for k, v in frames.items()}


def _latest(trials: pd.DataFrame) -> pd.DataFrame:
    order = trials.assign(_done=trials["finished_at"].fillna("")).sort_values("_done")
    return order.drop_duplicates(["config", "task", "attempt"], keep="last").drop(columns="_done")


def _true(x) -> bool:
    """A stored boolean that may be missing (NaN/None) or come back from SQL as 0/1."""
    return x is not None and not (isinstance(x, float) and np.isnan(x)) and bool(x)


def _state(row) -> str:
    status = row["status"]
    if not isinstance(status, str):
        return "missing"
    if status == "running":
        return "unfinished"
    if status == "infra_error":
        return "infra_error"
    if _true(row["refused"]) and not isinstance(row["fallback_used"], str):
        return "refused"
    return "final" if _true(row["final"]) else "provisional"


def outcomes(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per outcome of the shared set with ``state``, ``score`` (what counts toward the partial
    score; NaN when withheld), ``R_upper``, ``is_full`` and phase scores under the same rules."""
    from ..rubric import is_full

    cols = ["config", "task", "attempt"]
    if trials.empty:
        return pd.DataFrame(columns=[*cols, "state", "score", "R_upper", "is_full", *PHASE_SCORES])
    t = _latest(trials)
    grid = pd.MultiIndex.from_product([sorted(t["config"].unique()), sorted(t["task"].unique()),
                                       sorted(t["attempt"].unique())], names=cols).to_frame(index=False)
    o = grid.merge(t, on=cols, how="left")
    for key, col in (("task", "field"), ("task", "domain"), ("task", "scoring"), ("config", "model"),
                     ("config", "agent")):
        known = t.dropna(subset=[col]).drop_duplicates(key).set_index(key)[col]
        o[col] = o[col].fillna(o[key].map(known)) if col in o else o[key].map(known)
    o["field"] = o["field"].fillna("unknown")
    o["state"] = o.apply(_state, axis=1)
    zero = o["state"].isin(("refused", "missing", "unfinished"))
    withheld = o["state"] == "infra_error"
    o["score"] = np.where(zero, 0.0, o["R"].astype(float))
    o.loc[withheld, "score"] = np.nan
    o["R_upper"] = o["score"] + np.where(o["state"] == "provisional", o["uncounted_weight"].fillna(0.0), 0.0)
    for col in PHASE_SCORES:
        o[col] = np.where(zero, 0.0, o[col].astype(float))
        o.loc[withheld, col] = np.nan
    o["is_full"] = o["score"].map(lambda r: bool(is_full(r)) if pd.notna(r) else False)
    o["hours"] = o["agent_seconds"].astype(float) / 3600.0
    o["tokens"] = o["input_tokens"].astype(float) + o["output_tokens"].astype(float)
    return o
