"""A generated results index with the shape of a real study (PaperBenchX: 10 configurations x 93 tasks
across 12 fields, ~40 leaves each), for tests, benchmarks and teaching the report without running
thousands of trials. The run's ``run.json`` says ``"synthetic": true`` and the report prints a banner,
so generated numbers are never mistaken for results.

Each outcome's leaves pass with a probability set by the configuration's skill, the task's difficulty
and the phase (validation is hardest); some outcomes are refused (with a fallback for two
configurations), withheld by an infrastructure error, withheld for rescoring (a leaf, or a ``sota``
task's evaluator result, withheld as after a judge or workbench failure), still pending review (with
``R_upper``, the score if every pending leaf passed), or missing. Each trial also gets stage timings
and scoring's split (checks, judge calls on the task's judged leaves, the rest), drawn from a stream of
their own: the outcomes are those of an index generated without them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sqlalchemy import insert

from ..batch.run_spec import RunSpec, read_run_spec, write_run_spec
from ..errors import WorkbenchError
from ..paths import RunPaths
from ..rubric import is_full
from ..store import Store, activity_time, leaf_scores, stage_timings, trials
from ..trajectory.activities import ACTIVITIES

FIELDS = ["RF filters and FSS", "antennas", "photonic crystals", "metasurfaces", "quantum chemistry",
          "computational materials", "molecular docking", "single-cell omics", "genomics", "robot control",
          "manipulation", "fluid dynamics"]
PHASE_SPLIT = {"modeling": 0.35, "execution": 0.30, "validation": 0.35}
PHASE_EASE = {"modeling": 0.6, "execution": 0.55, "validation": -0.5}
FLUSH_LEAF_ROWS = 200_000


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _stage_seconds(clock, row: dict, replay_sec: float, judge_leaves: int) -> dict[str, float]:
    """A trial's seconds per stage (and, into ``row``, where scoring's went), on the scale measured on
    the development machine: one confined reader ~1 s, a judge call a few seconds, a notebook ~2 s."""
    if row["status"] == "infra_error":  # the sandbox failed during the replay
        return {"session": float(clock.uniform(600, 6000)), "replay": float(clock.uniform(1, 20))}
    delivered = not row.get("refused") or row.get("fallback_used")
    calls = judge_leaves + int(clock.poisson(0.5 * judge_leaves)) if delivered else 0  # + tool rounds
    checks, judge, other = clock.uniform(0.6, 1.6), calls * clock.uniform(3, 9), clock.uniform(0.1, 0.5)
    row.update(score_checks_seconds=float(checks), score_judge_seconds=float(judge), score_other_seconds=float(other),
               judge_calls=calls)
    return {"session": float(row["agent_seconds"] + clock.uniform(10, 60)),
            "replay": float(replay_sec * clock.lognormal(0, 0.3) if delivered else clock.uniform(1, 3)),
            "score": float(checks + judge + other + clock.uniform(1.5, 3.0)), "review": float(clock.uniform(1, 2))}


def synthesize(run_dir: Path | str, *, configs: int = 10, tasks: int = 93, attempts: int = 1, leaves: int = 40,
               fields: int = 12, sota_tasks: int = 3, qa_tasks: int = 2, seed: int = 0,
               url: str | None = None) -> dict[str, int]:
    """Write a synthetic run (run.json + index) into ``run_dir``; returns the counts written."""
    rng = np.random.default_rng(seed)
    clock = np.random.default_rng([seed, 1])  # stage timings: their own stream, so the outcomes stay as they were
    run = RunPaths(Path(run_dir))
    run.trials.mkdir(parents=True, exist_ok=True)
    names = [f"model-{chr(65 + i)}" if i < 26 else f"model-{i}" for i in range(configs)]
    skill = dict(zip(names, rng.normal(0.0, 0.6, configs), strict=True))
    turns_scale = dict(zip(names, rng.uniform(80, 380, configs), strict=True))
    refusers = set(names[1:3]) if configs > 3 else set()
    task_ids = [f"task-{i:03d}" for i in range(tasks)]
    task_field = {t: FIELDS[i % min(fields, len(FIELDS))] for i, t in enumerate(task_ids)}
    field_ease = {f: rng.normal(0, 0.7) for f in FIELDS}
    hardness = {t: rng.normal(0.3, 0.8) - field_ease[task_field[t]] for t in task_ids}
    scoring = {t: "sota" if i < sota_tasks else "qa" if i < sota_tasks + qa_tasks else "rubric"
               for i, t in enumerate(task_ids)}
    phases = [p for p, share in PHASE_SPLIT.items() for _ in range(max(1, round(share * leaves)))][:leaves]
    weights = np.array([PHASE_SPLIT[p] / phases.count(p) for p in phases])
    weights = weights / weights.sum()
    phase_weight = {p: float(weights[[q == p for q in phases]].sum()) for p in PHASE_SPLIT}
    replay_sec = {t: float(clock.lognormal(np.log(240), 0.9)) for t in task_ids}
    judge_leaves = {t: min(leaves, int(clock.choice([0, 0, 2, 4, 6]))) for t in task_ids}  # the last leaves

    store = Store.for_run(run.root, url)
    store.rebuild(run.root)  # clears this run's rows (there are no trial directories)
    counts = {t.name: 0 for t in (trials, leaf_scores, activity_time, stage_timings)}
    trial_rows, leaf_rows, flow_rows, stage_rows = [], [], [], []

    def flush(conn) -> None:
        """Insert the rows made so far: 100 attempts x 40 leaves is millions of leaf rows, never all in memory."""
        for row in trial_rows:
            stages = _stage_seconds(clock, row, replay_sec[row["task"]], judge_leaves[row["task"]])
            row.update({f"{stage}_seconds": sec for stage, sec in stages.items()})
            stage_rows.extend({"run": row["run"], "trial_id": row["trial_id"], "stage": stage, "status": "done",
                               "seconds": sec} for stage, sec in stages.items())
        for table, rows in ((trials, trial_rows), (leaf_scores, leaf_rows), (activity_time, flow_rows),
                            (stage_timings, stage_rows)):
            cols = [c.name for c in table.columns]  # executemany needs the same keys in every row
            for i in range(0, len(rows), 20_000):
                conn.execute(insert(table), [{c: r.get(c) for c in cols} for r in rows[i:i + 20_000]])
            counts[table.name] += len(rows)
            rows.clear()

    with store.db.begin() as conn:
        for cfg, t, attempt in ((c, t, a) for c in names for t in task_ids for a in range(1, attempts + 1)):
            if len(leaf_rows) >= FLUSH_LEAF_ROWS:
                flush(conn)
            u = rng.random()
            if u < 0.01:
                continue  # missing: never ran
            tid = f"{t}__{cfg}__{attempt}"
            base = {"run": run.root.name, "trial_id": tid, "task": t, "field": task_field[t], "domain": "synthetic",
                    "scoring": scoring[t], "config": cfg, "agent": "synthetic", "model": cfg, "attempt": attempt,
                    "engine": "synthetic", "started_at": "2026-11-01T00:00:00+00:00"}
            if u < 0.02:
                trial_rows.append({**base, "status": "infra_error", "error": "synthetic: sandbox failed"})
                continue
            refused = cfg in refusers and rng.random() < 0.12
            fallback = "model-D" if refused and cfg == names[1] else None
            if refused and not fallback:
                trial_rows.append({**base, "status": "complete", "refused": True, "R": 0.0, "final": True,
                                   "full": False, "R_upper": 0.0, "full_upper": False, "coverage": 1.0,
                                   "needs_rescoring": False, "turns": 1, "agent_seconds": 5.0,
                                   "input_tokens": 2000, "output_tokens": 50, "agent_cost_usd": 0.01,
                                   "modeling_share": 0.0, "execution_share": 0.0, "validation_share": 0.0,
                                   "uncounted_weight": 0.0, "finished_at": "2026-11-01T01:00:00+00:00"})
                continue
            who = fallback or cfg
            logit = skill[who] - hardness[t] + rng.normal(0, 0.5)
            passed = rng.random(leaves) < _sigmoid(logit + np.array([PHASE_EASE[p] for p in phases]))
            score = passed.astype(float)
            v = rng.random()
            status = np.full(leaves, "scored", dtype=object)
            if v < 0.05:  # 3 %: two leaves await review; 2 %: a judge failure withheld one leaf
                status[rng.choice(leaves, size=2 if v < 0.03 else 1, replace=False)] = (
                    "pending_review" if v < 0.03 else "withheld")
            evaluator_withheld = scoring[t] == "sota" and rng.random() < 0.1
            counted = status == "scored"
            R = float((weights * score * counted).sum())
            R_upper = float((weights * np.where(counted, score, 1.0)).sum())  # no gates here: R + uncounted
            earned = {p: float((weights * score * counted)[[q == p for q in phases]].sum()) for p in PHASE_SPLIT}
            turns = int(max(5, rng.lognormal(np.log(turns_scale[who]), 0.4)))
            seconds = float(turns * rng.uniform(40, 110))
            row = {**base, "status": "complete", "refused": refused, "fallback_used": fallback, "R": R,
                   "full": bool(is_full(R)), "final": bool(counted.all()) and not evaluator_withheld,
                   "R_upper": R_upper, "full_upper": bool(is_full(R_upper)),
                   "needs_rescoring": bool((status == "withheld").any() or evaluator_withheld),
                   "coverage": float((weights * counted).sum()), "delivery": "delivered",
                   "agent_status": "completed", "replay": "succeeded", "pending_review": int((~counted).sum()),
                   "modeling_earned": earned["modeling"], "execution_earned": earned["execution"],
                   "validation_earned": earned["validation"],
                   **{f"{p}_share": earned[p] / phase_weight[p] for p in PHASE_SPLIT},
                   "uncounted_weight": float((weights * ~counted).sum()), "turns": turns,
                   "agent_seconds": seconds, "activity_seconds": seconds,  # the activity rows below add up to it
                   "input_tokens": int(turns * rng.uniform(8e3, 2e4)),
                   "output_tokens": int(turns * rng.uniform(300, 900)),
                   "agent_cost_usd": round(turns * rng.uniform(0.01, 0.05), 4),
                   "finished_at": "2026-11-01T06:00:00+00:00"}
            if scoring[t] == "sota" and not evaluator_withheld:  # withheld: g and band stay NULL
                g = float(np.clip(rng.normal(logit / 4, 0.15), -1, 1))
                row.update(sota_g=g, sota_band="surpass" if g > 0.1 else "match" if g >= 0 else
                           "reproduce" if g >= -0.05 else "below")
            elif scoring[t] == "qa":
                row.update(qa_oeq=float(np.clip(1 + 4 * _sigmoid(logit) + rng.normal(0, 0.4), 1, 5)),
                           qa_mcq_accuracy=float(_sigmoid(logit + rng.normal(0, 0.3))))
            trial_rows.append(row)
            for i in range(leaves):
                leaf_rows.append({"run": run.root.name, "trial_id": tid, "leaf_id": f"L{i:02d}",
                                  "phase": phases[i], "effective_weight": float(weights[i]),
                                  "score": score[i] if counted[i] else None,
                                  "status": status[i], "rationale": "",
                                  "method": "judge" if i >= leaves - judge_leaves[t] else "deterministic"})
            share = rng.dirichlet([2.0, 3.0, 9.0, 4.0, 1.5])
            flow_rows += [{"run": run.root.name, "trial_id": tid, "activity": s, "seconds": float(seconds * x)}
                          for s, x in zip(ACTIVITIES, share, strict=True)]

        flush(conn)
    store.db.dispose()
    params = {"configs": configs, "tasks": tasks, "attempts": attempts, "leaves": leaves, "fields": fields,
              "sota_tasks": sota_tasks, "qa_tasks": qa_tasks, "seed": seed}
    write_run_spec(run, RunSpec(synthetic=True, generator=params))
    return counts


def is_synthetic(run_dir: Path | str) -> bool:
    try:
        spec = read_run_spec(RunPaths(Path(run_dir)))
    except WorkbenchError:
        return False
    return spec is not None and spec.synthetic
