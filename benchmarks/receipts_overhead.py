"""What recording execution receipts costs: the demo replay (PySCF, threaded) with the recorder off, on
without the CPU profile (``WORKBENCH_CPU_SAMPLES=0``), and on as every replay records (with it).

    .venv/bin/python benchmarks/receipts_overhead.py --repeat 4 --json benchmarks/receipts_overhead.json

Runs are interleaved (off, no-profile, on, off, ...) so that a noisy machine hurts all alike; ratios of the
medians are the overheads; the CPU attribution's own cost is "on" against "no-profile". The recorder's
start (bpftrace attaching its probes) happens before the replay's clock starts and is reported separately,
as it is paid once per replay.

Then a flood (``--flood``, on by default): a replay that opens a library a million times, closes a sparse
file after 20,000 writes and forks 5,000 writers, recorded in a fresh process, whose peak memory
(``ru_maxrss``) and time after the script are what the host pays for receipts that end incomplete.
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

FLOOD = """mkdir -p results
python3 -c "
import os, sqlite3
lib = sqlite3.__file__
for i in range(1_000_000):
    os.close(os.open(lib, os.O_RDONLY))
fd = os.open('results/flood.bin', os.O_CREAT | os.O_WRONLY)
os.ftruncate(fd, 16 << 20)
for i in range(20000):
    os.pwrite(fd, b'x', i * 512)
    os.close(os.open('results/flood.bin', os.O_WRONLY))
for i in range(5000):
    if os.fork() == 0:
        os.pwrite(fd, b'y', i)
        os._exit(0)
    os.wait()
"
"""


def flood() -> dict:
    """One flooding replay in this (fresh) process: its peak memory and what the replay cost after the script."""
    import resource
    import tempfile

    from tests.conftest import write_files, write_task
    from workbench.replay.trial import replay_trial
    from workbench.task import load_task

    root = Path(tempfile.mkdtemp(prefix="bench-flood-"))
    task = load_task(write_task(root / "task", timeout_sec=300, max_processes=64))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    prov = replay_trial(task, write_files(root / "sub", {"reproduce.sh": FLOOD}), root / "trial")
    total = time.perf_counter() - t0
    r = json.loads((root / "trial" / "replay" / "receipts.json").read_text())
    return {"script_wall_sec": round(prov.wall_sec, 2), "replay_total_sec": round(total, 2),
            "after_script_sec": round(total - prov.wall_sec, 2),
            "peak_rss_mb_before": round(before / 1024), "peak_rss_mb": round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "complete": r["complete"], "problems": r["problems"][:3], "processes": len(r["processes"]),
            "receipts_bytes": (root / "trial" / "replay" / "receipts.json").stat().st_size}


def main() -> None:
    from workbench.replay.trial import replay_trial
    from workbench.sandbox.environments import install_env
    from workbench.sandbox.recorder import Recorder
    from workbench.sandbox.volume import Volume
    from workbench.task import load_task

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-flood", action="store_true")
    ap.add_argument("--flood-only", action="store_true", help=argparse.SUPPRESS)  # the fresh process's part
    args = ap.parse_args()
    if args.flood_only:
        print(json.dumps(flood()))
        return
    task = load_task(REPO / "tasks" / "h2-pes")
    install_env(task)
    modes = ("off", "no_profile", "on")
    walls: dict[str, list[float]] = {m: [] for m in modes}
    totals: dict[str, list[float]] = {m: [] for m in modes}
    sizes = []
    for _ in range(args.repeat):
        for mode in modes:
            os.environ["WORKBENCH_RECEIPTS"] = "0" if mode == "off" else "1"
            os.environ["WORKBENCH_CPU_SAMPLES"] = "0" if mode == "no_profile" else "1"
            out = Path(tempfile.mkdtemp(prefix="bench-receipts-")) / "t"
            t0 = time.perf_counter()
            prov = replay_trial(task, task.paths.solution, out)
            totals[mode].append(time.perf_counter() - t0)
            walls[mode].append(prov.wall_sec)
            if mode == "on":
                r = json.loads((out / "replay" / "receipts.json").read_text())
                samples = sum(c["cpu_sec"] for p in r["processes"] for c in p.get("cpu_code", []))
                sizes.append({"processes": len(r["processes"]), "files": len(r["files"]), "complete": r["complete"],
                              "bytes": (out / "replay" / "receipts.json").stat().st_size,
                              "cpu_sec": r.get("total_cpu_sec"), "cpu_sec_sampled": round(samples, 2)})
    os.environ.pop("WORKBENCH_CPU_SAMPLES", None)
    attach = []
    staging = Path(tempfile.mkdtemp(prefix="bench-recorder-"))
    volume = Volume.create(staging / "vol", 64, 1000)
    try:
        for _ in range(3):
            t0 = time.perf_counter()
            with Recorder(2_999_999, volume.root):
                attach.append(time.perf_counter() - t0)
    finally:
        volume.release()
    med = {k: statistics.median(v) for k, v in walls.items()}
    tot = {k: statistics.median(v) for k, v in totals.items()}
    result = {"measured_at": time.strftime("%Y-%m-%d"), "task": task.id, "repeat": args.repeat,
              **{f"replay_wall_sec_{m}": round(med[m], 2) for m in modes},
              "replay_overhead_pct": round(100 * (med["on"] / med["off"] - 1), 1),
              "cpu_profile_overhead_pct": round(100 * (med["on"] / med["no_profile"] - 1), 1),
              **{f"replay_total_sec_{m}": round(tot[m], 2) for m in modes},
              "total_overhead_pct": round(100 * (tot["on"] / tot["off"] - 1), 1),
              "recorder_attach_sec": round(statistics.median(attach), 2), "receipts": sizes[-1],
              "walls": {k: [round(x, 2) for x in v] for k, v in walls.items()}}
    if not args.no_flood:
        import subprocess

        done = subprocess.run([sys.executable, __file__, "--flood-only"], capture_output=True, text=True, check=True)
        result["flood"] = json.loads(done.stdout.strip().splitlines()[-1])
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
