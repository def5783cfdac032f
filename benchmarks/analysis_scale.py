"""Report build time at study scale (930 outcomes x 40 leaves) and at 10x (9,300 outcomes).

For each scale: generating the synthetic index, loading it with the metrics (in this process), and
`workbench report` end to end (papermill executes the overview notebook, nbconvert exports HTML), for
both the interactive (plotly) and the static (matplotlib) report; plus the HTML sizes. Ratios are
measured within one run of this script (these machines are noisy).

    .venv/bin/python benchmarks/analysis_scale.py [--json benchmarks/analysis_scale.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workbench.analysis import frames, metrics
from workbench.analysis.synthetic import synthesize

SCALES = {"study (930 outcomes)": {"configs": 10, "tasks": 93, "attempts": 1},
          "10x (9,300 outcomes)": {"configs": 10, "tasks": 93, "attempts": 10}}


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def report(runs: Path, out: Path, static: bool) -> tuple[float, int]:
    argv = [sys.executable, "-m", "workbench", "report", str(runs), "--out", str(out), *(["--static"] * static)]
    _, seconds = timed(lambda: subprocess.run(argv, check=True, capture_output=True))
    return seconds, out.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape in SCALES.items():
            runs = Path(tmp) / name.split()[0].replace("x", "ten") / "runs"
            counts, gen = timed(lambda shape=shape, runs=runs: synthesize(runs / "study", leaves=40, seed=0, **shape))

            def analyse(runs=runs):
                index = frames.load_index(runs)
                o = frames.outcomes(index["trials"])
                metrics.model_table(o), metrics.domain_view(o), metrics.phase_share_distributions(o)
                metrics.solved_by_any(o), metrics.composition_gap(o)
                metrics.time_allocation(o, index["activity_time"])
                return len(o)

            n, load = timed(analyse)
            interactive, size_i = report(runs, runs.parent / "report.html", static=False)
            static, size_s = report(runs, runs.parent / "static.html", static=True)
            results[name] = {"outcomes": n, "leaf_rows": counts["leaf_scores"], "generate_s": round(gen, 2),
                             "load_and_metrics_s": round(load, 2), "report_interactive_s": round(interactive, 2),
                             "report_static_s": round(static, 2), "html_interactive_mb": round(size_i / 1e6, 2),
                             "html_static_mb": round(size_s / 1e6, 2)}
            print(name, results[name], flush=True)
    small, big = results.values()
    results["ratio_10x_over_study"] = {k: round(big[k] / small[k], 2) for k in
                                       ("load_and_metrics_s", "report_interactive_s", "report_static_s")}
    results["max_rss_mb_this_process"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
