"""Executors compared: 20 short trials on the local pool, a Dask LocalCluster and SLURM, in one run.

The mini task of harness_overhead.py (reproduce.sh writes one file), the oracle agent, the inline engine,
2 parallel trials everywhere (2 SLURM jobs of 1 CPU on a one-node cluster this script starts, as the tests
do: tests/slurm_cluster.py). Per executor, through `run_batch` as `workbench batch` runs it:

- wall: the whole batch (executor start, every trial, executor stop); trials/min = 60 n / wall;
- start-up: building the executor (process pool; LocalCluster; SLURMCluster + client) and, for each,
  the first trial back (SLURM: sbatch, the job started, a worker registered, then one trial);
- steady: completions after the first wave (one trial per worker), (n - workers) / (last - first wave);
- scheduling overhead per trial, two ways: in the batch, workers / steady rate - mean time inside the
  stages (worker time per trial not spent running it: dispatch, pickling, the result, the index write,
  and the trial's own harness); and 20 null jobs (abs) in one map_unordered on a warm executor,
  wall / 20: the executor's own cost per job, without the noise of trials sharing 2 cores.

Executors alternate round by round (--rounds) and the median per executor is kept; ratios come from one
run of this script (these machines are noisy).

    PYTHONPATH=. .venv/bin/python benchmarks/executors.py [--trials 20] [--rounds 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from harness_overhead import make_task  # noqa: E402

import workbench.batch.run as batch  # noqa: E402
from workbench.paths import RunPaths  # noqa: E402
from workbench.trial.record import read_trial  # noqa: E402

WORKERS = 2


class Timed:
    """Wraps the executor run_batch builds: when it was built, when each trial came back, when it closed."""

    def __init__(self):
        self.built_s = 0.0
        self.t0 = 0.0
        self.done: list[float] = []

    def install(self):
        real = batch.get_executor

        def get_executor(*a, **kw):
            t = time.monotonic()
            ex = real(*a, **kw)
            self.built_s = time.monotonic() - t
            inner = ex.map_unordered

            def map_unordered(*ma, **mkw):
                self.t0 = time.monotonic()
                for item in inner(*ma, **mkw):
                    self.done.append(time.monotonic())
                    yield item

            ex.map_unordered = map_unordered
            return ex

        batch.get_executor = get_executor
        return real


def one(executor: str, task: Path, n: int, out: Path, slurm: dict | None) -> dict:
    matrix = out.with_suffix(".toml")
    matrix.write_text(f'tasks = ["{task}"]\nattempts = {n}\nengine = "inline"\n'
                      '[[agents]]\nname = "oracle"\nagent = "oracle"\n')
    timed = Timed()
    real = timed.install()
    try:
        t = time.monotonic()
        res = batch.run_batch(matrix, out, executor=executor, workers=WORKERS, progress=False, slurm=slurm)
        wall = time.monotonic() - t
    finally:
        batch.get_executor = real
    assert res.counts.get("complete") == n, res.counts
    run = RunPaths(out)
    busy = [sum(st.seconds or 0 for st in read_trial(run.trial(p.name)).stages.values())
            for p in sorted(run.trials.iterdir())]
    first, wave, last = timed.done[0], timed.done[WORKERS - 1], timed.done[-1]
    steady = (n - WORKERS) / (last - wave)
    return {"wall_s": round(wall, 2), "trials_per_min": round(60 * n / wall, 1),
            "executor_built_s": round(timed.built_s, 2),
            "first_trial_back_s": round(timed.built_s + first - timed.t0, 2),
            "steady_trials_per_min": round(60 * steady, 1),
            "mean_in_stages_s": round(statistics.mean(busy), 3),
            "overhead_per_trial_s": round(WORKERS / steady - statistics.mean(busy), 3)}


def null_jobs(executor: str, out: Path, slurm: dict | None, n: int = 20) -> dict:
    """n null jobs (abs) in one map_unordered, as a batch submits its trials, on a warm executor:
    milliseconds per job (median of 3 maps)."""
    opts = {}
    if executor == "slurm":
        opts = {**slurm, "cpus": 1, "memory_mb": 1024, "log_dir": out / "slurm", "job_name": "wb-null"}
    ex = batch.get_executor(executor, WORKERS, None, **opts)
    try:
        list(ex.map_unordered(abs, range(WORKERS)))  # workers (SLURM: jobs) up
        times = []
        for _ in range(3):
            t = time.monotonic()
            got = dict(ex.map_unordered(abs, range(n)))
            times.append(time.monotonic() - t)
            assert got == {i: i for i in range(n)}, got
    finally:
        ex.close()
    return {"null_job_ms": round(1000 * statistics.median(times) / n, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    import workbench

    assert Path(workbench.__file__).is_relative_to(ROOT), workbench.__file__
    base = Path(tempfile.mkdtemp(prefix="wb-bench-exec-"))
    os.chmod(base, 0o755)
    task = make_task(base / "trivial", "mkdir -p results; echo done; echo x > results/x.txt\n")
    results: dict = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                                 "nice": os.nice(0), "loadavg_start": os.getloadavg()},
                     "trials": args.trials, "workers": WORKERS}
    from tests import slurm_cluster as sc

    executors = ["local", "dask"] + (["slurm"] if sc.available() else [])
    runs: dict[str, list[dict]] = {e: [] for e in executors}
    cluster = None
    try:
        if "slurm" in executors:
            cluster = sc.SlurmCluster(Path(tempfile.mkdtemp(prefix="wb-bench-slurm-"))).__enter__()
            os.environ["SLURM_CONF"] = str(cluster.conf)
            results["slurm_cluster_started_s"] = round(cluster.started_sec, 2)
        for r in range(args.rounds):
            for e in executors:
                slurm = {"walltime": "00:30:00", "partition": cluster.partition} if e == "slurm" else None
                m = one(e, task, args.trials, base / f"{e}-{r}", slurm)
                runs[e].append(m | null_jobs(e, base / f"null-{e}-{r}", slurm))
                print(e, r, json.dumps(runs[e][-1]), file=sys.stderr)
    finally:
        if cluster is not None:
            cluster.__exit__(None, None, None)
            shutil.rmtree(cluster.root, ignore_errors=True)
    med = {e: {k: round(statistics.median(m[k] for m in ms), 3) for k in ms[0]} for e, ms in runs.items()}
    results["median"] = med
    results["rounds"] = runs
    results["throughput_ratio_vs_local"] = {e: round(med[e]["trials_per_min"] / med["local"]["trials_per_min"], 2)
                                            for e in executors}
    results["steady_ratio_vs_local"] = {
        e: round(med[e]["steady_trials_per_min"] / med["local"]["steady_trials_per_min"], 2) for e in executors}
    results["machine"]["loadavg_end"] = os.getloadavg()
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
