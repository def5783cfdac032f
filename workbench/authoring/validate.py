"""`workbench task validate` and `workbench task freeze`: the construction pipeline's checks (PaperBenchX §3.3).

Validation replays the reference solution twice, the starter (nop) and every calibration submission in
clean sandboxes (each a second time with secret inputs where the task varies inputs), scores them, and
checks: oracle R > 0.9; nop R = 0; each partial strictly between the best invalid and the oracle; each
invalid < 0.3 even with every leaf still pending review counted as passed (its R_upper: an invalid
submission must fail on what the machine decided); at least three cheats (``calibration/cheat-*``:
fabricated outputs in the right formats, a cheap run relabelled, cached outputs, label copies, shotgun
answers, caches in code padded with CPU, steered spot checks) each < 0.3 the same way; the two reference
replays agree (identical evidence, or within the tolerances tests/determinism.toml declares) and score
identically; the reference replay fits the time budget; the reference's replays with secret inputs
succeed. A ``discovery`` task instead checks that the reference is valid and at (or within
``reference_within`` of) the published record, the starter (its initial code) valid at its declared metric,
and each cheat invalid or worse than that initial code. The record goes to tests/validation.json.

``sandbox="docker"`` runs all of it in the task's image instead; when the task's record comes from the
other backend (and the task has not changed since), one more check asks that every submission scored the
same R and R_upper there: the backends are interchangeable only if the science scores the same in both.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import math
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import WorkbenchError
from ..io import atomic_write_json, iter_files, remove_tree, sha256_file
from ..replay.trial import replay_trial
from ..sandbox.environments import environment_for, install_env, install_image
from ..scoring import score_trial
from ..task.construction import (
    CheckResult,
    Determinism,
    FreezeRecord,
    ValidationRecord,
    read_determinism,
    read_freeze,
    read_review_log,
    read_validation,
)
from ..task.package import Task, load_task
from ..version import __version__

log = logging.getLogger(__name__)

MAX_REFERENCE_SEC = 180.0
INVALID_MAX = 0.3
MIN_CHEATS = 3  # of different kinds: fabricated outputs, a cheap run relabelled, a cache copied out


def calibration_submissions(task: Task) -> dict[str, Path]:
    """calibration/<kind>[-name]/ directories holding a reproduce.sh: kind is partial, invalid or cheat."""
    root = task.paths.calibration
    if not root.is_dir():
        return {}
    return {f"calibration/{d.name}": d for d in sorted(root.iterdir())
            if d.is_dir() and (d / "reproduce.sh").is_file()}


def _kind(name: str) -> str:
    return Path(name).name.split("-", 1)[0]


def _numbers(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(_numbers(v, f"{prefix}.{k}"))
        return out
    if isinstance(obj, list):
        out = {}
        for i, v in enumerate(obj):
            out.update(_numbers(v, f"{prefix}[{i}]"))
        return out
    return {prefix: obj}


def _within(a: Path, b: Path, tol) -> tuple[bool, str]:
    """Compare two JSON or CSV files value by value: numbers within tolerance, the rest equal."""
    def close(x, y) -> bool:
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y))
        if not numbers:
            return x == y
        return math.isclose(x, y, rel_tol=tol.rel, abs_tol=tol.abs)

    if a.suffix == ".json":
        va, vb = _numbers(json.loads(a.read_text())), _numbers(json.loads(b.read_text()))
    elif a.suffix == ".csv":
        import pandas as pd

        da, db = pd.read_csv(a), pd.read_csv(b)
        if list(da.columns) != list(db.columns) or da.shape != db.shape:
            return False, "different columns or shape"
        va = {f"{c}[{i}]": v for c in da.columns for i, v in enumerate(da[c].tolist())}
        vb = {f"{c}[{i}]": v for c in db.columns for i, v in enumerate(db[c].tolist())}
    else:
        return False, "tolerances apply to .json and .csv files only"
    if va.keys() != vb.keys():
        return False, "different structure"
    bad = [k for k in va if not close(va[k], vb[k])]
    return not bad, (f"{len(bad)} value(s) outside tolerance, e.g. {bad[0]}: {va[bad[0]]} vs {vb[bad[0]]}"
                     if bad else "within tolerance")


def compare_evidence(a: Path, b: Path, spec: Determinism) -> dict[str, Any]:
    """Evidence of two reference replays: identical files, files within tolerance, and the rest."""
    def files(root: Path) -> dict[str, Path]:
        return {p.relative_to(root).as_posix(): p for p in iter_files(root)
                if p.is_file() and not p.is_symlink() and p.name != "MANIFEST.sha256"}

    # the replays with secret inputs differ by construction (each drew its own values)
    fa = {k: v for k, v in files(a).items() if not k.startswith("secret/")}
    fb = {k: v for k, v in files(b).items() if not k.startswith("secret/")}
    identical, tolerated, ignored, differing = 0, [], [], []
    for rel in sorted(set(fa) | set(fb)):
        if any(fnmatch.fnmatchcase(rel, g) for g in spec.ignore):
            ignored.append(rel)
            continue
        if rel not in fa or rel not in fb:
            differing.append(f"{rel}: only in one replay")
        elif sha256_file(fa[rel]) == sha256_file(fb[rel]):
            identical += 1
        else:
            tol = next((t for g, t in spec.tolerances.items() if fnmatch.fnmatchcase(rel, g)), None)
            if tol is None:
                differing.append(f"{rel}: bytes differ and no tolerance is declared")
            else:
                ok, why = _within(fa[rel], fb[rel], tol)
                (tolerated if ok else differing).append(f"{rel}: {why}")
    return {"identical": identical, "within_tolerance": tolerated, "ignored": ignored, "differing": differing}


def _replay_and_score(task: Task, submission: Path, trial: Path, timeout: float | None,
                      sandbox: str) -> dict[str, Any]:
    prov = replay_trial(task, submission, trial, timeout=timeout, sandbox=sandbox)
    scores = score_trial(task, trial)
    return {"R": scores.R, "R_upper": scores.R_upper, "full": scores.full, "coverage": scores.coverage,
            "replay": prov.status,
            "replay_wall_sec": prov.wall_sec, "failure_reasons": prov.failure_reasons,
            "secret_replay": (prov.secret_replay or {}).get("status"),
            "secret_replay_sec": (prov.secret_replay or {}).get("wall_sec"),
            "leaf_scores": {lf.id: lf.score for lf in scores.leaves},
            # the leaf table (as `run --leaves` shows it): id, status, score, effective weight
            "leaves": [[lf.id, lf.status, lf.score, round(lf.effective_weight, 6)] for lf in scores.leaves],
            **({"sota_g": scores.sota.get("g"), "sota_band": scores.sota.get("band")} if scores.sota else {}),
            **({"mcq_accuracy": scores.qa.get("mcq_accuracy"), "oeq_mean": scores.qa.get("oeq_mean")}
               if scores.qa else {}),
            **({"metric": scores.discovery.get("metric"), "valid": scores.discovery.get("valid"),
                "message": scores.discovery.get("message"), "withheld": scores.discovery.get("withheld")}
               if scores.discovery else {})}


def explain(run: dict[str, Any]) -> str:
    """Which leaves decided a run's R: the undecided ones (pending, withheld, disputed) that R counts as 0
    and R_upper as 1, and the leaves that earned the most."""
    leaves = run.get("leaves") or []
    open_ = [(i, w) for i, status, score, w in leaves if score is None]
    earned = sorted(((i, w * score) for i, _, score, w in leaves if score), key=lambda x: -x[1])
    parts = []
    if run.get("replay") not in (None, "succeeded"):
        parts.append("the replay failed: " + "; ".join((run.get("failure_reasons") or ["no reason recorded"])[:2]))
    if open_:
        statuses = sorted({status for _, status, score, _ in leaves if score is None})
        parts.append(f"{'/'.join(statuses)} leaves {', '.join(i for i, _ in open_)} weigh "
                     f"{sum(w for _, w in open_):.2f}: R = {run['R']:.2f} with them at 0, "
                     f"R_upper = {run['R_upper']:.2f}")
    if earned:
        parts.append("earned by " + ", ".join(f"{i} {e:.3f}" for i, e in earned[:6])
                     + (f" (+{len(earned) - 6} more)" if len(earned) > 6 else ""))
    return "; ".join(parts or ["no leaf earned anything"])


def _why(runs: dict[str, dict[str, Any]], names: list[str]) -> str:
    """The explanation of each named run, for a failed check's detail."""
    return "".join(f"\n      {n}: {explain(runs[n])}" for n in names)


def _same_scores(runs: dict[str, dict[str, Any]], recorded: ValidationRecord) -> CheckResult:
    """Every submission's R and R_upper against the record of the other backend."""
    common = sorted(set(runs) & set(recorded.runs))
    differ = [f"{n}: R {recorded.runs[n]['R']:.4f} -> {runs[n]['R']:.4f}" for n in common
              if (round(runs[n]["R"], 4), round(runs[n]["R_upper"], 4))
              != (round(recorded.runs[n]["R"], 4), round(recorded.runs[n]["R_upper"], 4))]
    return CheckResult(name=f"same scores as under {recorded.sandbox}", passed=bool(common) and not differ,
                       detail=f"{len(common) - len(differ)} of {len(common)} submissions score the same R"
                              + (f"; {'; '.join(differ[:5])}" if differ else ""))


def _secret_check(o1: dict, o2: dict) -> CheckResult:
    """The reference follows the secret inputs: both its replays with drawn values succeed."""
    ok = o1["secret_replay"] == o2["secret_replay"] == "succeeded"
    return CheckResult(name="reference replays with secret inputs succeed", passed=ok,
                       detail=f"{o1['secret_replay']}, {o2['secret_replay']} in "
                              f"{o1['secret_replay_sec'] or 0:.1f} s, {o2['secret_replay_sec'] or 0:.1f} s")


def validate_task(task: Task, *, workdir: Path | None = None, install: bool = True, write: bool = True,
                  max_reference_sec: float = MAX_REFERENCE_SEC, sandbox: str = "bwrap") -> ValidationRecord:
    if install:
        install_image(task) if sandbox == "docker" else install_env(task)
    env, _ = environment_for(task, sandbox)
    recorded = read_validation(task.paths)
    if recorded and (recorded.sandbox == sandbox or recorded.content_hash != task.content_hash()):
        recorded = None  # compare only with the other backend's record of this very task
    subs = calibration_submissions(task)
    if not (task.paths.solution / "reproduce.sh").is_file():
        raise WorkbenchError(f"{task.paths.solution}: no reproduce.sh; the task cannot be validated")
    discovery = task.scoring == "discovery"  # cheats only: the initial code is the other bound
    if not discovery and (not any(_kind(n) == "invalid" for n in subs) or not any(_kind(n) == "partial" for n in subs)):
        raise WorkbenchError(f"{task.paths.calibration}: needs at least one partial* and one invalid* submission")
    spec = read_determinism(task.paths)
    base = Path(tempfile.mkdtemp(prefix=f"validate-{task.id}-", dir=workdir))
    timeout = task.config.replay.timeout_sec
    runs: dict[str, dict[str, Any]] = {}
    try:
        for name, sub in [("oracle-1", task.paths.solution), ("oracle-2", task.paths.solution),
                          ("initial" if discovery else "nop", task.paths.starter), *subs.items()]:
            log.info("validate %s: %s", task.id, name)
            runs[name] = _replay_and_score(task, sub, base / name.replace("/", "_"), timeout, sandbox)
        det = compare_evidence(base / "oracle-1" / "evidence", base / "oracle-2" / "evidence", spec)
    finally:
        remove_tree(base)

    o1, o2 = runs["oracle-1"], runs["oracle-2"]
    ref_sec = max(o1["replay_wall_sec"], o2["replay_wall_sec"])
    if discovery:
        checks = _discovery_checks(task, runs, det, ref_sec, max_reference_sec)
    else:
        checks = _rubric_checks(task, runs, det, ref_sec, max_reference_sec)
    checks += ([_secret_check(o1, o2)] if task.config.replay.secret_inputs else []) \
        + ([_same_scores(runs, recorded)] if recorded else [])
    result = ValidationRecord(
        task=task.id, content_hash=task.content_hash(), passed=all(c.passed for c in checks), checks=checks,
        runs={n: {k: v for k, v in r.items() if k != "leaf_scores"} for n, r in runs.items()},
        determinism=det, reference_replay_sec=round(ref_sec, 2),
        secret_replay_sec=max((r["secret_replay_sec"] or 0.0 for r in (o1, o2)), default=None)
        if task.config.replay.secret_inputs else None, environment_digest=env["digest"], sandbox=sandbox,
        validated_at=datetime.now(UTC).isoformat(timespec="seconds"), workbench_version=__version__)
    if write:
        atomic_write_json(task.paths.validation, result.model_dump())
    return result


def _rubric_checks(task: Task, runs: dict[str, dict[str, Any]], det: dict[str, Any], ref_sec: float,
                   max_reference_sec: float) -> list[CheckResult]:
    """What a rubric, sota or qa task's construction must show: the oracle full, nop 0, invalid and cheats
    under 0.3, a partial between them and the oracle, the reference deterministic and fast enough."""
    o1, o2, nop = runs["oracle-1"], runs["oracle-2"], runs["nop"]
    invalid = {n: r["R"] for n, r in runs.items() if _kind(n) == "invalid"}
    invalid_upper = {n: r["R_upper"] for n, r in runs.items() if _kind(n) == "invalid"}
    cheats = {n: r["R_upper"] for n, r in runs.items() if _kind(n) == "cheat"}
    partial = {n: r["R"] for n, r in runs.items() if _kind(n) == "partial"}
    best_invalid = max(invalid.values())
    low_oracle = [n for n in ("oracle-1", "oracle-2") if runs[n]["R"] <= 0.9]
    high_invalid = [n for n, r in invalid_upper.items() if r >= INVALID_MAX]
    high_cheats = [n for n, r in cheats.items() if r >= INVALID_MAX]
    out_of_order = [n for n, r in partial.items() if not best_invalid < r < min(o1["R"], o2["R"])]
    return [
        CheckResult(name="oracle R > 0.9", passed=not low_oracle,
                    detail=f"R = {o1['R']:.4f}, {o2['R']:.4f} (replays {o1['replay']}, {o2['replay']})"
                    + _why(runs, low_oracle)),
        CheckResult(name="nop R = 0", passed=nop["R"] == 0,
                    detail=f"R = {nop['R']:.4f}" + (_why(runs, ["nop"]) if nop["R"] else "")),
        CheckResult(name="invalid < 0.3 (pending leaves passed)", passed=not high_invalid,
                    detail=", ".join(f"{n} R_upper = {r:.4f} (R = {invalid[n]:.4f})"
                                     for n, r in invalid_upper.items()) + _why(runs, high_invalid)),
        CheckResult(name=f"cheats < 0.3 (at least {MIN_CHEATS}, pending leaves passed)",
                    passed=len(cheats) >= MIN_CHEATS and not high_cheats,
                    detail=(", ".join(f"{n} R_upper = {r:.4f}" for n, r in cheats.items()) or "no cheats")
                    + ("" if len(cheats) >= MIN_CHEATS else f"; {len(cheats)} of the {MIN_CHEATS} required")
                    + _why(runs, high_cheats)),
        CheckResult(name="invalid < partial < oracle", passed=not out_of_order,
                    detail=", ".join(f"{n} R = {r:.4f}" for n, r in partial.items())
                    + f" (best invalid {best_invalid:.4f}, oracle {min(o1['R'], o2['R']):.4f})"
                    + _why(runs, out_of_order)),
        CheckResult(name="reference replays agree",
                    passed=not det["differing"] and o1["leaf_scores"] == o2["leaf_scores"],
                    detail=f"{det['identical']} identical, {len(det['within_tolerance'])} within tolerance, "
                           f"{len(det['ignored'])} ignored; " + ("; ".join(det["differing"][:5]) or "no differences")
                           + ("" if o1["leaf_scores"] == o2["leaf_scores"] else "; leaf scores differ")),
        CheckResult(name=f"reference replay <= {max_reference_sec:.0f} s", passed=ref_sec <= max_reference_sec,
                    detail=f"{ref_sec:.1f} s on {task.config.environment.cpus} core(s)"),
    ]


def _discovery_checks(task: Task, runs: dict[str, dict[str, Any]], det: dict[str, Any], ref_sec: float,
                      max_reference_sec: float) -> list[CheckResult]:
    """What a discovery task's construction must show: the reference valid and at (or near) the published
    record, the initial code valid at its declared value, every cheat invalid or worse than the initial code."""
    spec = task.discovery_spec
    o1, o2, initial = runs["oracle-1"], runs["oracle-2"], runs["initial"]

    def shown(r: dict[str, Any]) -> str:
        if r.get("valid"):
            return f"{r['metric']:.10g}"
        replay = "" if r.get("replay") == "succeeded" else \
            f"the replay {r.get('replay')}: {'; '.join((r.get('failure_reasons') or ['no reason recorded'])[:2])}; "
        return f"invalid ({replay}{r.get('message') or 'no evaluation'})"

    far = [n for n in ("oracle-1", "oracle-2") if not (runs[n].get("valid") and spec.near_published(runs[n]["metric"]))]
    initial_ok = (bool(initial.get("valid"))
                  and abs(initial["metric"] - spec.initial) <= 1e-6 * max(1.0, abs(spec.initial)))
    cheats = {n: r for n, r in runs.items() if _kind(n) == "cheat"}
    gaining = [n for n, r in cheats.items() if r.get("valid") and not spec.better(spec.initial, r["metric"])]
    withheld = [n for n, r in runs.items() if r.get("withheld")]
    return [
        CheckResult(name=f"reference valid and within {spec.reference_within:g} of the published "
                         f"{spec.published.value:g}", passed=not far,
                    detail=f"{spec.metric} = {shown(o1)}, {shown(o2)} ({spec.direction}; published "
                           f"{spec.published.value:g}, {spec.published.source})"),
        CheckResult(name=f"initial code valid at {spec.initial:g}", passed=initial_ok,
                    detail=f"environment/starter_submission: {spec.metric} = {shown(initial)}"),
        CheckResult(name=f"cheats invalid or worse than the initial code (at least {MIN_CHEATS})",
                    passed=len(cheats) >= MIN_CHEATS and not gaining,
                    detail=(", ".join(f"{n}: {shown(r)}" for n, r in cheats.items()) or "no cheats")
                    + ("" if len(cheats) >= MIN_CHEATS else f"; {len(cheats)} of the {MIN_CHEATS} required")
                    + (f"; gaining: {', '.join(gaining)}" if gaining else "")),
        CheckResult(name="the evaluator ran on every submission", passed=not withheld,
                    detail="; ".join(f"{n}: {runs[n].get('message')}" for n in withheld) or "no evaluation withheld"),
        CheckResult(name="reference replays agree",
                    passed=not det["differing"] and o1.get("metric") == o2.get("metric"),
                    detail=f"{det['identical']} identical; " + ("; ".join(det["differing"][:5]) or "no differences")),
        CheckResult(name=f"reference replay <= {max_reference_sec:.0f} s", passed=ref_sec <= max_reference_sec,
                    detail=f"{ref_sec:.1f} s on {task.config.environment.cpus} core(s)"),
    ]


def freeze_task(task: Task) -> FreezeRecord:
    """Record the content hashes of a validated task; refuses when validation is missing or stale."""
    record = read_validation(task.paths)
    if record is None:
        raise WorkbenchError(f"{task.id}: not validated yet; run `workbench task validate {task.root}` first")
    digest = task.content_hash()
    if record.content_hash != digest:
        raise WorkbenchError(f"{task.id}: changed since it was validated; validate it again before freezing")
    if not record.passed:
        raise WorkbenchError(f"{task.id}: its last validation failed; it cannot be frozen")
    frozen = FreezeRecord(task=task.id, content_hash=digest, files=task.file_hashes(), validation_passed=True,
                          reviewers=read_review_log(task.paths).reviewers,
                          frozen_at=datetime.now(UTC).isoformat(timespec="seconds"), workbench_version=__version__)
    atomic_write_json(task.paths.freeze, frozen.model_dump())
    return frozen


def frozen_changes(task: Task) -> list[str]:
    """Files changed, added or removed since the task was frozen (empty when unfrozen or unchanged)."""
    record = read_freeze(task.paths)
    if record is None:
        return []
    frozen = record.files
    now = task.file_hashes()
    return sorted(k for k in set(frozen) | set(now) if frozen.get(k) != now.get(k))


def _validate_dir(root: str, install: bool, write: bool, sandbox: str) -> ValidationRecord:
    return validate_task(load_task(root), install=install, write=write, sandbox=sandbox)


def validate_tasks(roots: list[Path], *, jobs: int = 1, install: bool = True, write: bool = True,
                   sandbox: str = "bwrap") -> Iterator[ValidationRecord]:
    """Validate several tasks, ``jobs`` at a time (each in its own process), yielding each record as it
    ends. A task's replays mostly keep one core busy, so two tasks at once use a two-core machine whole."""
    if jobs <= 1 or len(roots) <= 1:
        for root in roots:
            yield _validate_dir(str(root), install, write, sandbox)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_validate_dir, str(r), install, write, sandbox) for r in roots]
        try:
            for done in as_completed(futures):
                yield done.result()
        finally:
            for f in futures:
                f.cancel()
