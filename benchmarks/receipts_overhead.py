"""What recording execution receipts costs: the demo replay (PySCF, threaded) with and without the recorder.

    .venv/bin/python benchmarks/receipts_overhead.py --repeat 4 --json benchmarks/receipts_overhead.json

Runs are interleaved (off, on, off, on, ...) so that a noisy machine hurts both alike; the ratio of the
medians is the overhead. The recorder's start (bpftrace attaching its probes) happens before the
replay's clock starts and is reported separately, as it is paid once per replay.
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


def main() -> None:
    from workbench.env import install_env
    from workbench.replay import replay
    from workbench.sandbox.recorder import Recorder
    from workbench.task import load_task

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    task = load_task(REPO / "tasks" / "h2-pes")
    install_env(task)
    walls: dict[str, list[float]] = {"off": [], "on": []}
    totals: dict[str, list[float]] = {"off": [], "on": []}
    sizes = []
    for _ in range(args.repeat):
        for mode in ("off", "on"):
            os.environ["WORKBENCH_RECEIPTS"] = "1" if mode == "on" else "0"
            out = Path(tempfile.mkdtemp(prefix="bench-receipts-")) / "t"
            t0 = time.perf_counter()
            prov = replay(task, task.paths.solution, out)
            totals[mode].append(time.perf_counter() - t0)
            walls[mode].append(prov.wall_sec)
            if mode == "on":
                r = json.loads((out / "replay" / "receipts.json").read_text())
                sizes.append({"processes": len(r["processes"]), "files": len(r["files"]), "complete": r["complete"],
                              "bytes": (out / "replay" / "receipts.json").stat().st_size})
    attach = []
    for _ in range(3):
        t0 = time.perf_counter()
        with Recorder(2_999_999, None):
            attach.append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in walls.items()}
    tot = {k: statistics.median(v) for k, v in totals.items()}
    result = {"measured_at": time.strftime("%Y-%m-%d"), "task": task.id, "repeat": args.repeat,
              "replay_wall_sec_off": round(med["off"], 2), "replay_wall_sec_on": round(med["on"], 2),
              "replay_overhead_pct": round(100 * (med["on"] / med["off"] - 1), 1),
              "replay_total_sec_off": round(tot["off"], 2), "replay_total_sec_on": round(tot["on"], 2),
              "total_overhead_pct": round(100 * (tot["on"] / tot["off"] - 1), 1),
              "recorder_attach_sec": round(statistics.median(attach), 2), "receipts": sizes[-1],
              "walls": {k: [round(x, 2) for x in v] for k, v in walls.items()}}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
