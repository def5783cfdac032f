"""What the receipts' recorder costs every system call on the host while a replay records.

    sudo .venv/bin/python benchmarks/recorder_syscall_cost.py --json benchmarks/recorder_syscall_cost.json

The recorder's eBPF probes are host-wide (filtered by the sandbox's uid inside each program), so every system
call of every process pays for them while a replay records. ``dd bs=1`` of 2,000,000 bytes (4,000,000 read and
write calls, nothing else) runs as a host process and as the sandbox's uid, with the recorder off, on without
its probe of 32-bit system calls (``raw_syscalls:sys_enter``, which runs for every call), and on as replays run
it. Runs are interleaved and repeated; medians are reported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.sandbox import recorder  # noqa: E402

UID = 60123
CALLS = 4_000_000
FULL = recorder.SCRIPT
WITHOUT_COMPAT = FULL[:FULL.index("// the syscalls:* tracepoints above")] + FULL[FULL.index("profile:hz:"):]


def dd(uid: int | None) -> float:
    who = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if uid else []
    t = time.perf_counter()
    subprocess.run(who + ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", f"count={CALLS // 2}"],
                   capture_output=True, check=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    modes = {"off": None, "without the 32-bit probe": WITHOUT_COMPAT, "on (as replays run it)": FULL}
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for mode, script in modes.items():
                rec = None
                if script is not None:
                    recorder.SCRIPT = script
                    rec = recorder.Recorder(UID, Path(tmp)).__enter__()
                for who, uid in (("host process", None), ("sandbox uid", UID)):
                    times.setdefault((mode, who), []).append(dd(uid))
                if rec:
                    rec.__exit__()
    rows = []
    for (mode, who), ts in times.items():
        med = statistics.median(ts)
        base = statistics.median(times[("off", who)])
        rows.append({"recorder": mode, "caller": who, "sec": round(med, 3),
                     "ns_per_call_over_off": round((med - base) / CALLS * 1e9)})
        print(json.dumps(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"calls": CALLS, "repeat": args.repeat, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
