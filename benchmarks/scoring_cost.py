"""What confinement costs: scoring a trial's checks in the sandboxed reader vs in-process, and a replay with
and without its kernel limits (cgroups) and sized volume.

    .venv/bin/python benchmarks/scoring_cost.py --repeat 5 --json benchmarks/scoring_cost.json

The scoring part uses the demo task (h2-pes, its environment installed) and the evidence of one oracle
replay; the replay part a trivial task (reproduce.sh writes one file), so the numbers are overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def scoring(repeat: int) -> dict:
    from workbench.evidence import Evidence
    from workbench.reader.client import Reader
    from workbench.reader.runtime import ensure_runtime
    from workbench.replay.trial import replay_trial
    from workbench.sandbox.environments import install_env
    from workbench.scoring import score_trial
    from workbench.scoring.checks import load_task_checks, run_check
    from workbench.task import load_task

    task = load_task(REPO / "tasks" / "h2-pes")
    install_env(task)
    t0 = time.perf_counter()
    ensure_runtime()
    runtime_sec = time.perf_counter() - t0
    trial = Path(tempfile.mkdtemp(prefix="bench-score-")) / "t"
    prov = replay_trial(task, task.paths.solution, trial).model_dump()
    det = [lf for lf in task.rubric.leaves if lf.node.scoring_method == "deterministic"]
    ev = Evidence(trial / "evidence", prov)

    def in_process():
        checks = load_task_checks(task.paths.checks_py)
        for lf in det:
            try:
                run_check(lf.node.check, ev, checks)
            except Exception:
                pass

    reader = Reader(trial / "evidence", prov, memory_mb=task.config.environment.memory_mb, timeout_sec=600,
                    tests=task.paths.tests)
    return {"task": task.id, "deterministic_leaves": len(det),
            "runtime_first_use_sec": round(runtime_sec, 3),
            "checks_in_process_sec": round(timed(in_process, repeat), 3),
            "checks_confined_sec": round(timed(lambda: reader.checks([(lf.id, lf.node.check) for lf in det],
                                                                      task_checks=True), repeat), 3),
            "one_tool_call_confined_sec": round(timed(lambda: reader.tools(
                [("read_csv", {"path": "submission/results/convergence.csv"})], 4000), repeat), 3),
            "score_trial_sec": round(timed(lambda: score_trial(task, trial), repeat), 3)}


def replays(repeat: int) -> dict:
    from tests.conftest import write_files, write_task
    from workbench.replay.trial import replay_trial
    from workbench.task import load_task

    root = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    task = load_task(write_task(root / "task"))
    sub = write_files(root / "sub", {"reproduce.sh": "mkdir -p results\necho 1 > results/x.txt\n"})
    out = {}
    for name, env in [("limits_and_volume", {}), ("no_cgroups", {"WORKBENCH_CGROUPS": "0"}),
                      ("no_volume", {"WORKBENCH_VOLUMES": "0"}),
                      ("neither", {"WORKBENCH_CGROUPS": "0", "WORKBENCH_VOLUMES": "0"})]:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            out[f"replay_{name}_sec"] = round(timed(lambda: replay_trial(task, sub, root / "t"), repeat), 3)
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    result = {"measured_at": time.strftime("%Y-%m-%d"), "python": sys.version.split()[0],
              **scoring(args.repeat), **replays(args.repeat)}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
