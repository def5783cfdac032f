"""The results store: the index of trials, leaf scores and stage timings, and expert review records.

Index tables are derived: the trial directories are their source of truth, ``workbench index`` rebuilds
them and batches update them as trials finish; each trial is rewritten in one transaction, so
re-indexing never duplicates an outcome, and an index from an older schema is dropped and rebuilt.
Review records are primary data: append-only (who, when, which leaf, old and new score, comment),
never rewritten or dropped. Any SQLAlchemy URL works (``postgresql://...`` for a team sharing one store).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    delete,
    false,
    insert,
    inspect,
    select,
)
from sqlalchemy.exc import OperationalError

from .errors import WorkbenchError
from .jupyter.notebooks import STAGES
from .paths import RunPaths, TrialPaths
from .rubric.phases import PHASES
from .scoring.results import AWAITING
from .session.ledger import read_usage
from .trajectory.activities import allocate_file

log = logging.getLogger(__name__)

metadata = MetaData()

READ_ROWS = 20_000  # rows converted at a time: 10^5 trials are never all held as Python row objects
SCHEMA_VERSION = "8"  # of the derived index tables; a different stored version means drop and rebuild

trials = Table(
    "trials", metadata,
    Column("run", String(300), primary_key=True),
    Column("trial_id", String(300), primary_key=True),
    Column("task", String(200)), Column("field", String(200)), Column("domain", String(200)),
    Column("scoring", String(20)), Column("config", String(200)), Column("agent", String(100)),
    Column("model", String(200)), Column("attempt", Integer), Column("engine", String(20)),
    Column("status", String(20)), Column("delivery", String(20)), Column("agent_status", String(30)),
    Column("refused", Boolean), Column("fallback_used", String(200)), Column("replay", String(20)),
    # the score columns are copied from scores.json (the one source of R), never from trial.json
    Column("R", Float), Column("full", Boolean), Column("coverage", Float), Column("final", Boolean),
    Column("R_upper", Float), Column("full_upper", Boolean),  # R if every uncounted leaf passed (bounds)
    Column("needs_rescoring", Boolean),
    # each phase twice: the weight earned (of the task's 1), and that as a share of the phase's weight
    Column("modeling_earned", Float), Column("execution_earned", Float), Column("validation_earned", Float),
    Column("awaiting_review", Integer),  # leaves pending review, withheld or disputed
    Column("modeling_share", Float), Column("execution_share", Float), Column("validation_share", Float),
    Column("uncounted_weight", Float),  # weight of leaves still pending, withheld or disputed
    Column("turns", Integer), Column("agent_seconds", Float), Column("input_tokens", Integer),
    Column("output_tokens", Integer), Column("agent_cost_usd", Float),
    Column("sota_g", Float), Column("sota_band", String(20)), Column("qa_oeq", Float), Column("qa_mcq_accuracy", Float),
    Column("judge_prompt_tokens", Integer), Column("judge_completion_tokens", Integer), Column("judge_cost_usd", Float),
    # where the last scoring's time went (scores.json's timing): deterministic checks, judge calls, the rest
    Column("score_checks_seconds", Float), Column("score_judge_seconds", Float), Column("score_other_seconds", Float),
    Column("judge_calls", Integer),
    # seconds of each stage (trial.json, as stage_timings) and of tool-mediated agent time coded from the
    # trajectory (the sum of its activity_time rows; NULL without one): what the report reads, in one table
    *[Column(f"{s}_seconds", Float) for s in STAGES], Column("activity_seconds", Float),
    Column("started_at", String(40)), Column("finished_at", String(40)), Column("error", Text),
)

leaf_scores = Table(
    "leaf_scores", metadata,
    Column("run", String(300), primary_key=True),
    Column("trial_id", String(300), primary_key=True),
    Column("leaf_id", String(300), primary_key=True),
    Column("phase", String(20)), Column("effective_weight", Float), Column("score", Float),
    Column("status", String(30)), Column("method", String(20)), Column("rationale", Text),
    Column("prompt_tokens", Integer), Column("completion_tokens", Integer), Column("cost_usd", Float),
    Column("judge_cached", Boolean),
)

stage_timings = Table(
    "stage_timings", metadata,
    Column("run", String(300), primary_key=True),
    Column("trial_id", String(300), primary_key=True),
    Column("stage", String(40), primary_key=True),
    Column("status", String(20)), Column("seconds", Float), Column("started_at", String(40)),
    Column("notebook", String(300)),
)

activity_time = Table(  # tool-mediated agent time by activity, coded from the trajectory (activities.py)
    "activity_time", metadata,
    Column("run", String(300), primary_key=True),
    Column("trial_id", String(300), primary_key=True),
    Column("activity", String(40), primary_key=True),
    Column("seconds", Float),
)

TABLES = (trials, leaf_scores, stage_timings, activity_time)  # derived: rebuildable from the trial directories
meta = Table("meta", metadata, Column("key", String(100), primary_key=True), Column("value", Text))

reviews = Table(
    "reviews", metadata,
    Column("review_id", Integer, primary_key=True, autoincrement=True),
    Column("run", String(300)), Column("trial_id", String(300), index=True), Column("task", String(200)),
    Column("leaf_id", String(300)), Column("kind", String(20)),  # review | adjudication
    Column("reviewer", String(200)), Column("score", Float), Column("previous_score", Float),
    Column("comment", Text), Column("created_at", String(40)),
    # what the review judged: the trial's evidence manifest digest and the leaf's evidence digest; a
    # review of other evidence (a re-run trial) is stale and never applied
    Column("evidence_digest", String(64)), Column("leaf_evidence", String(64)),
)
REVIEW_BINDING = ("evidence_digest", "leaf_evidence")  # columns added to stores made before binding

settings = Table(  # primary data, like reviews: e.g. how many independent reviewers a run requires
    "settings", metadata,
    Column("run", String(300), primary_key=True), Column("key", String(100), primary_key=True),
    Column("value", Text),
)


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _scores_columns(scores: dict) -> dict:
    """Every score column of a trial's index row, from its scores.json alone (empty: not scored)."""
    if not scores:
        return {}
    phases, weights = scores.get("phases") or {}, scores.get("phase_weights") or {}
    share = {f"{p}_share": (phases.get(p, 0.0) / weights[p] if weights.get(p) else None) for p in PHASES}
    leaves = scores.get("leaves", [])
    uncounted = sum(lf["effective_weight"] for lf in leaves if lf["status"] in AWAITING)
    sota, qa = scores.get("sota") or {}, scores.get("qa") or {}
    timing = scores.get("timing") or {}  # scored before timings were kept: NULL, not 0
    return {"R": scores.get("R"), "full": scores.get("full"), "coverage": scores.get("coverage"),
            "final": scores.get("final"), "R_upper": scores.get("R_upper"), "full_upper": scores.get("full_upper"),
            "needs_rescoring": scores.get("needs_rescoring"),
            **{f"{p}_earned": phases.get(p) for p in PHASES},
            "awaiting_review": sum(1 for lf in leaves if lf["status"] in AWAITING),
            **share, "uncounted_weight": uncounted, "sota_g": sota.get("g"),
            "sota_band": sota.get("band"), "qa_oeq": qa.get("oeq_mean"), "qa_mcq_accuracy": qa.get("mcq_accuracy"),
            "judge_prompt_tokens": (scores.get("judge_usage") or {}).get("prompt_tokens"),
            "judge_completion_tokens": (scores.get("judge_usage") or {}).get("completion_tokens"),
            "judge_cost_usd": (scores.get("judge_usage") or {}).get("cost_usd"),
            "score_checks_seconds": timing.get("checks_seconds"), "score_judge_seconds": timing.get("judge_seconds"),
            "score_other_seconds": timing.get("other_seconds"), "judge_calls": timing.get("judge_calls")}


def _trial_rows(tp: TrialPaths) -> tuple[dict, list[dict], list[dict], list[dict]] | None:
    rec = _json(tp.trial_json)
    if "id" not in rec:
        return None
    cfg, out, meta = rec.get("config", {}), rec.get("outcome", {}), rec.get("task_meta") or {}
    run = tp.root.parent.parent.name
    complete = rec.get("status") == "complete" and tp.scores.is_file()
    scores = _json(tp.scores) if complete else {}
    try:
        usage = read_usage(tp)
    except WorkbenchError as exc:  # indexed without its usage columns; the rest of the trial stands
        log.warning("%s", exc)
        usage = None
    row = {c.name: None for c in trials.columns}
    row.update({
        "trial_id": rec["id"], "run": run, "task": rec.get("task"), "field": meta.get("field"),
        "domain": meta.get("domain"), "scoring": meta.get("scoring"),
        "config": cfg.get("name"), "agent": cfg.get("agent"), "model": cfg.get("model"),
        "attempt": rec.get("attempt"), "engine": rec.get("engine"), "status": rec.get("status"),
        "delivery": out.get("delivery"), "agent_status": out.get("agent_status"), "refused": out.get("refused"),
        "fallback_used": out.get("fallback_used"), "replay": out.get("replay"),
        "started_at": rec.get("started_at"), "finished_at": rec.get("finished_at"), "error": rec.get("error"),
        **({"turns": usage.turns, "agent_seconds": usage.wall_sec, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "agent_cost_usd": usage.cost_usd} if usage else {}),
        **_scores_columns(scores),
    })
    leaves = []
    for lf in scores.get("leaves", []):
        u = lf.get("usage") or {}
        leaves.append({"run": run, "trial_id": rec["id"], "leaf_id": lf["id"], "phase": lf["phase"],
                       "effective_weight": lf["effective_weight"], "score": lf["score"],
                       "status": lf["status"], "method": lf["method"], "rationale": lf["rationale"],
                       "prompt_tokens": u.get("prompt_tokens"), "completion_tokens": u.get("completion_tokens"),
                       "cost_usd": u.get("cost_usd"), "judge_cached": (lf.get("judge") or {}).get("cached")})
    timings = [{"run": run, "trial_id": rec["id"], "stage": k, "status": v.get("status"), "seconds": v.get("seconds"),
                "started_at": v.get("started_at"), "notebook": v.get("notebook")}
               for k, v in rec.get("stages", {}).items()]
    coded = allocate_file(tp.trajectory) if tp.trajectory.is_file() else {}
    activity = [{"run": run, "trial_id": rec["id"], "activity": k, "seconds": v} for k, v in coded.items()]
    row.update({f"{t['stage']}_seconds": t["seconds"] for t in timings if t["stage"] in STAGES},
               activity_seconds=sum(coded.values()) if coded else None)
    return row, leaves, timings, activity


def _with_driver(url: str) -> str:
    """``postgresql://`` means the psycopg (3) driver we ship, not SQLAlchemy's default psycopg2."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


class Store:
    def __init__(self, url: str):
        self.url = _with_driver(url)
        self.db = create_engine(self.url)  # SQLAlchemy's engine: not a trial's stage engine (`--engine`)
        try:
            self._migrate_index()
            metadata.create_all(self.db)
            self._migrate_reviews()
        except OperationalError as exc:  # a full disk, a read-only file, an unreachable server: say which
            raise WorkbenchError(f"results index {self.db.url.render_as_string(hide_password=True)}: "
                                 f"{exc.orig}") from None

    def _migrate_index(self) -> None:
        """Drop the derived index tables when they were made by another schema version (they are rebuilt)."""
        found = inspect(self.db)
        version = None
        if found.has_table(meta.name):
            with self.db.connect() as conn:
                version = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
        if version == SCHEMA_VERSION:
            return
        stale = [t for t in TABLES if found.has_table(t.name)]
        with self.db.begin() as conn:
            if stale:
                log.warning("results index schema changed (%s -> %s); it will be rebuilt", version, SCHEMA_VERSION)
                for t in stale:
                    t.drop(conn)
            meta.create(conn, checkfirst=True)
            conn.execute(delete(meta).where(meta.c.key == "schema_version"))
            conn.execute(insert(meta).values(key="schema_version", value=SCHEMA_VERSION))

    def _migrate_reviews(self) -> None:
        """Review records are primary data: a store made before reviews were bound to their evidence gets
        the binding columns added (its old records stay, unbound, and are shown as stale)."""
        have = {c["name"] for c in inspect(self.db).get_columns(reviews.name)}
        with self.db.begin() as conn:
            for name in REVIEW_BINDING:
                if name not in have:
                    conn.exec_driver_sql(f"ALTER TABLE {reviews.name} ADD COLUMN {name} VARCHAR(64)")

    @classmethod
    def for_run(cls, run_dir: Path | str, url: str | None = None) -> Store:
        """The run's store: ``url``, else WORKBENCH_STORE_URL, else the SQLite file RUN/results.db."""
        import os

        url = url or os.environ.get("WORKBENCH_STORE_URL")
        if url:
            return cls(url)
        run = RunPaths(Path(run_dir))
        run.root.mkdir(parents=True, exist_ok=True)
        return cls(f"sqlite:///{run.results_db.resolve()}")

    def upsert_trial(self, trial_dir: Path | str) -> bool:
        """(Re)write one trial's rows; False when the directory holds no readable trial.json."""
        rows = _trial_rows(TrialPaths(Path(trial_dir)))
        if rows is None:
            return False
        row, *children = rows
        with self.db.begin() as conn:
            for t in TABLES:
                conn.execute(delete(t).where((t.c.run == row["run"]) & (t.c.trial_id == row["trial_id"])))
            conn.execute(insert(trials), [row])
            for table, data in zip((leaf_scores, stage_timings, activity_time), children, strict=True):
                if data:
                    conn.execute(insert(table), data)
        return True

    def rebuild(self, run_dir: Path | str) -> int:
        """Replace the index of a run with what its trial directories say; returns trials indexed."""
        run = RunPaths(Path(run_dir))
        with self.db.begin() as conn:
            for t in TABLES:
                conn.execute(delete(t).where(t.c.run == run.root.name))
        n = 0
        if run.trials.is_dir():
            for d in sorted(run.trials.iterdir()):
                n += self.upsert_trial(d)
        return n

    def trial_ids(self, run: str | None = None) -> list[str]:
        q = select(trials.c.trial_id).order_by(trials.c.trial_id)
        if run is not None:
            q = q.where(trials.c.run == run)
        with self.db.connect() as conn:
            return [r[0] for r in conn.execute(q)]

    def reviews_for(self, run: str, trial_id: str | None = None):
        """Review records of a run (or one trial), oldest first, as a DataFrame."""
        import pandas as pd

        q = select(reviews).where(reviews.c.run == run)
        if trial_id is not None:
            q = q.where(reviews.c.trial_id == trial_id)
        with self.db.connect() as conn:
            return pd.read_sql(q.order_by(reviews.c.review_id), conn)

    def get_setting(self, run: str, key: str, default: str | None = None) -> str | None:
        with self.db.connect() as conn:
            value = conn.execute(select(settings.c.value).where((settings.c.run == run) & (settings.c.key == key))
                                 ).scalar()
        return default if value is None else value

    def set_setting(self, run: str, key: str, value: str) -> None:
        with self.db.begin() as conn:
            conn.execute(delete(settings).where((settings.c.run == run) & (settings.c.key == key)))
            conn.execute(insert(settings).values(run=run, key=key, value=value))

    def add_review(self, *, run: str, trial_id: str, task: str, leaf_id: str, reviewer: str, score: float,
                   previous_score: float | None, comment: str = "", kind: str = "review",
                   evidence_digest: str | None = None, leaf_evidence: str | None = None) -> int:
        """Append one review record (never updated or deleted); returns its id."""
        from datetime import UTC, datetime

        with self.db.begin() as conn:
            res = conn.execute(insert(reviews).values(
                run=run, trial_id=trial_id, task=task, leaf_id=leaf_id, kind=kind, reviewer=reviewer, score=score,
                previous_score=previous_score, comment=comment, evidence_digest=evidence_digest,
                leaf_evidence=leaf_evidence, created_at=datetime.now(UTC).isoformat(timespec="seconds")))
            return int(res.inserted_primary_key[0])

    def frame(self, table: str = "trials", run: str | None = None, *, columns: Sequence[str] | None = None,
              trial_ids: Sequence[str] | None = None):
        """A table of the index as a pandas DataFrame: only one run's rows when ``run`` is given, only these
        trials' rows when ``trial_ids`` are, only these columns when ``columns`` are (the database reads
        no other: at 10^5 trials every column read costs)."""
        import pandas as pd

        t = metadata.tables[table]
        q = select(t) if columns is None else select(*(t.c[c] for c in columns))
        if run is not None:
            q = q.where(t.c.run == run)
        queries = [q]
        if trial_ids is not None:  # a few hundred ids a query: databases limit bound parameters
            queries = [q.where(t.c.trial_id.in_(trial_ids[i:i + 500])) for i in range(0, len(trial_ids), 500)]
        with self.db.connect() as conn:
            parts = [part for x in queries or [q.where(false())] for part in pd.read_sql(x, conn, chunksize=READ_ROWS)]
        # a column all NULL in one part is of another type there: infer it again over the whole
        return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True).infer_objects()

