"""Report build time and memory at study scale (930 outcomes x 40 leaves), at 10x (9,300) and at 100x (93,000).

For each scale: generating the synthetic index (40 leaves per outcome at every scale: 3.7 million leaf
rows at 100x, which the report never reads), loading it with every metric the report shows (in this
process, as the overview notebook does), and `workbench report` end to end (papermill executes the
overview notebook, nbconvert exports HTML), for both the interactive (plotly) and the static
(matplotlib) report, with the HTML sizes and the report's peak memory: the largest process (the CLI or
its kernel, ``ru_maxrss`` of the children) and the whole tree (CLI + kernel, sampled every 50 ms).
Ratios are measured within one run of this script (these machines are noisy).

    .venv/bin/python benchmarks/analysis_scale.py [--json benchmarks/analysis_scale.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

import psutil

from workbench.analysis import frames, metrics
from workbench.analysis.synthetic import synthesize

SCALES = {"study (930 outcomes)": ("study", {"configs": 10, "tasks": 93, "attempts": 1}),
          "10x (9,300 outcomes)": ("ten", {"configs": 10, "tasks": 93, "attempts": 10}),
          "100x (93,000 outcomes)": ("hundred", {"configs": 10, "tasks": 93, "attempts": 100})}
PEAK = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")  # kB, the largest descendant


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def tree_rss(proc: subprocess.Popen, peak: list[int], stop: threading.Event) -> None:
    """The largest sum of RSS over ``proc`` and its descendants, sampled until ``stop``."""
    try:
        root = psutil.Process(proc.pid)
        while not stop.wait(0.05):
            total = 0
            for p in [root, *root.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            peak[0] = max(peak[0], total)
    except psutil.Error:
        pass


def report(runs: Path, out: Path, static: bool) -> dict[str, float]:
    argv = [sys.executable, "-c", PEAK, sys.executable, "-m", "workbench", "report", str(runs), "--out", str(out),
            *(["--static"] * static)]
    peak, stop = [0], threading.Event()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watch = threading.Thread(target=tree_rss, args=(proc, peak, stop))
    watch.start()
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - t0
    stop.set()
    watch.join()
    if proc.returncode:
        raise SystemExit(f"workbench report failed:\n{stderr}")
    return {"s": seconds, "html_mb": out.stat().st_size / 1e6, "peak_rss_mb": int(stdout.split()[-1]) / 1024,
            "peak_tree_rss_mb": peak[0] / 2**20}


def analyse(runs: Path) -> int:
    """What the overview notebook computes, in this process."""
    index = frames.load_index(runs, tables=("trials",), columns=frames.ANALYSED)
    o = frames.outcomes(index["trials"])
    metrics.model_table(o), metrics.domain_view(o), metrics.phase_share_distributions(o)
    metrics.solved_by_any(o), metrics.composition_gap(o), metrics.turns_vs_score(o)
    metrics.time_allocation(o, frames.activity_sample(runs, o))
    metrics.time_per_stage(o), metrics.sota_summary(o), metrics.qa_summary(o), metrics.not_final(o)
    return len(o)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    results: dict = {"date": date.today().isoformat(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (folder, shape) in SCALES.items():
            runs = Path(tmp) / folder / "runs"
            counts, gen = timed(lambda shape=shape, runs=runs: synthesize(runs / "study", leaves=40, seed=0, **shape))
            n, load = timed(lambda runs=runs: analyse(runs))
            interactive = report(runs, runs.parent / "report.html", static=False)
            static = report(runs, runs.parent / "static.html", static=True)
            results[name] = {
                "outcomes": n, "leaf_rows": counts["leaf_scores"], "generate_s": round(gen, 2),
                "load_and_metrics_s": round(load, 2),
                **{f"report_{kind}_{k}": round(v, 2) for kind, r in (("interactive", interactive), ("static", static))
                   for k, v in r.items()}}
            print(name, results[name], flush=True)
            (runs / "study" / "results.db").unlink()  # 0.6 GB at 100x
    study, *larger = (results[n] for n in SCALES)
    for label, big in zip(("10x", "100x"), larger, strict=True):
        results[f"ratio_{label}_over_study"] = {k: round(big[k] / study[k], 2) for k in (
            "load_and_metrics_s", "report_interactive_s", "report_static_s", "report_interactive_peak_rss_mb",
            "report_static_peak_rss_mb")}
    results["max_rss_mb_this_process"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
