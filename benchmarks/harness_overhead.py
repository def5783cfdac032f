"""Harness overhead per trial and per stage: inline vs papermill on cold kernels vs on warm kernels;
and batch throughput (1 vs 2 workers).

Overhead = trial wall time - replay wall time (reproduce.sh in the sandbox) - agent time, i.e. what
the workbench itself costs. The task is trivial (reproduce.sh writes one file), so the numbers are the
harness alone. A stage's overhead is its median wall time under papermill minus under inline (the
notebook: a kernel, papermill's reading and writing, the displays). Cold kernels are launched per
notebook (``WORKBENCH_WARM_KERNELS=0``); warm ones come from the process's kernel pool, whose template
starts with the first warm trial (its start-up is in that trial, not in the medians). Throughput uses
a task whose reproduce.sh sleeps 2 s on one reserved core. Ratios are measured in one run of this
script (these machines are noisy).

    .venv/bin/python benchmarks/harness_overhead.py [--trials 5] [--batch-trials 8] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workbench.batch.matrix import AgentConfig
from workbench.batch.run import run_batch
from workbench.paths import RunPaths
from workbench.task import load_task
from workbench.trial.pipeline import run_trial

RUBRIC = {"id": "r", "sub_tasks": [
    {"id": "a", "weight": 1, "task_category": "Modeling", "check": {"kind": "file_exists", "path": "results/x.txt"}},
    {"id": "b", "weight": 1, "task_category": "Execution", "check": {"kind": "replay_succeeded"}},
    {"id": "c", "weight": 1, "task_category": "Validation",
     "check": {"kind": "log_pattern", "pattern": "done"}}]}


def make_task(root: Path, reproduce: str) -> Path:
    for d in ("environment/paper", "environment/starter_submission", "solution", "tests"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "task.toml").write_text('[task]\nname = "bench/trivial"\n[environment]\ncpus = 1\nmemory_mb = 1024\n'
                                    '[metadata.replay]\ntimeout_sec = 60\noutputs = ["results"]\n')
    (root / "instruction.md").write_text("Write results/x.txt.\n")
    (root / "environment/Dockerfile").write_text("FROM debian:bookworm-slim\n")
    (root / "environment/starter_submission/reproduce.sh").write_text("exit 1\n")
    (root / "solution/reproduce.sh").write_text(reproduce)
    (root / "tests/rubric.json").write_text(json.dumps(RUBRIC))
    return root


MODES = {"inline": ("inline", "1"), "cold": ("papermill", "0"), "warm": ("papermill", "1")}


def one_trial(task, mode: str, attempt: int, out: Path) -> tuple[float, float, dict[str, float]]:
    """(overhead, wall, {stage: seconds}) of one trial of ``mode``."""
    engine, warm = MODES[mode]
    os.environ["WORKBENCH_WARM_KERNELS"] = warm
    t0 = time.monotonic()
    rec = run_trial(task, AgentConfig(name="oracle", agent="oracle"), out / mode, attempt=attempt, engine=engine)
    wall = time.monotonic() - t0
    tp = RunPaths(out / mode).trial(rec.id)
    replay_wall = json.loads(tp.provenance.read_text())["wall_sec"]
    agent_wall = json.loads(tp.usage.read_text())["wall_sec"]
    return wall - replay_wall - agent_wall, wall, {k: st.seconds for k, st in rec.stages.items()}


def overheads(task_dir: Path, n: int, out: Path) -> dict[str, dict]:
    """``n`` trials of each mode, interleaved (inline, cold, warm, inline, ...) so noise hits all three."""
    task = load_task(task_dir)
    seen: dict[str, list] = {mode: [] for mode in MODES}
    for i in range(n):
        for mode in MODES:
            seen[mode].append(one_trial(task, mode, i + 1, out))
    os.environ["WORKBENCH_WARM_KERNELS"] = "1"
    result = {}
    for mode, trials in seen.items():
        stages = {k: [t[2][k] for t in trials] for k in trials[0][2]}
        result[mode] = {"engine": MODES[mode][0], "trials": n,
                        "overhead_median_s": round(statistics.median(t[0] for t in trials), 3),
                        "overhead_all_s": [round(t[0], 3) for t in trials],
                        "trial_wall_median_s": round(statistics.median(t[1] for t in trials), 3),
                        "stage_median_s": {k: round(statistics.median(v), 3) for k, v in stages.items()}}
    return result


def notebook_overheads(modes: dict[str, dict]) -> dict:
    """Per stage, papermill (cold, warm) minus inline; their median over the stages; per trial."""
    inline = modes["inline"]["stage_median_s"]
    out = {}
    for mode in ("cold", "warm"):
        per_stage = {k: round(v - inline[k], 3) for k, v in modes[mode]["stage_median_s"].items()}
        out[mode] = {"per_stage_s": per_stage, "stage_median_s": round(statistics.median(per_stage.values()), 3),
                     "per_trial_s": round(modes[mode]["overhead_median_s"] - modes["inline"]["overhead_median_s"], 3)}
    return out


def throughput(task_dir: Path, workers: int, n: int, out: Path) -> dict:
    matrix = out / f"matrix-{workers}.toml"
    matrix.write_text(f'tasks = ["{task_dir}"]\nattempts = {n}\nengine = "inline"\n'
                      '[[agents]]\nname = "oracle"\nagent = "oracle"\n')
    t0 = time.monotonic()
    res = run_batch(matrix, out / f"batch-{workers}", workers=workers, progress=False)
    wall = time.monotonic() - t0
    assert res.counts.get("complete") == n, res.counts
    return {"workers": workers, "trials": n, "wall_s": round(wall, 2), "trials_per_min": round(60 * n / wall, 2)}


def _memory_mb(pid: int) -> dict[str, float]:
    """Resident and proportional set size (shared pages split among their sharers) of one process."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":")
        fields[name] = int(value.split()[0]) / 1024
    return {"rss_mb": round(fields["Rss"], 1), "pss_mb": round(fields["Pss"], 1)}


def pool_memory() -> dict:
    """What this process's warm-kernel pool holds: the template and one spare kernel forked from it."""
    from workbench.jupyter import pool as kernel_pool
    from workbench.jupyter import warm as warm_kernels

    spare = kernel_pool.pool().ready[0][1].result(60)
    return {"template": _memory_mb(warm_kernels._template.proc.pid), "spare_kernel": _memory_mb(spare.provisioner.pid),
            "this_process": _memory_mb(os.getpid())}


def import_cost(block: bool) -> float:
    code = ("import sys,time; t=time.monotonic()\n"
            + ("sys.modules['rfc3987_syntax']=None\n" if block else "")
            + "import papermill; print(time.monotonic()-t)")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--batch-trials", type=int, default=8)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="wb-bench-"))
    os.chmod(base, 0o755)
    fast = make_task(base / "trivial", "mkdir -p results; echo done; echo x > results/x.txt\n")
    slow = make_task(base / "sleepy", "mkdir -p results; sleep 2; echo done; echo x > results/x.txt\n")
    results = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}
    results["papermill_import_s"] = {"stock": round(statistics.median(import_cost(False) for _ in range(3)), 3),
                                     "rfc3987_syntax_blocked": round(statistics.median(import_cost(True)
                                                                                       for _ in range(3)), 3)}
    modes = overheads(fast, args.trials, base / "overhead")
    results["overhead"] = {**modes, "notebook_overhead": notebook_overheads(modes)}
    results["warm_pool_memory"] = pool_memory()
    one = throughput(slow, 1, args.batch_trials, base)
    two = throughput(slow, 2, args.batch_trials, base)
    speedup = round(two["trials_per_min"] / one["trials_per_min"], 2)
    results["throughput"] = {"1": one, "2": two, "speedup_2_over_1": speedup}
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
