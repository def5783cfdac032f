"""How long the host's reader of execution receipts may stall before the kernel drops events.

    .venv/bin/python benchmarks/recorder_stalls.py --json benchmarks/recorder_stalls.json

eBPF keeps events in a ring per CPU; bpftrace moves them into a pipe; the workbench's reader thread reads the
pipe. A reader that stops (a garbage collection of a big host process, a busy machine) lets both fill, then the
kernel drops events and the receipts end incomplete, which fails an honest submission's ``written_by`` gates.
This runs the recorder (as root, with bpftrace) over three parallel fork storms of 15,000 writers each, a
sandbox uid of its own, while the reader is held still for S seconds in every 2 S, for the ring and pipe sizes
of bpftrace's defaults and of the workbench's (``recorder.RING_PAGES``, ``recorder.PIPE_BYTES``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.sandbox import recorder  # noqa: E402

UID = 60123
STORM = """import os
for _ in range({forks}):
    c = os.fork()
    if c == 0:
        fd = os.open({path!r}, os.O_WRONLY | os.O_CREAT, 0o666)
        os.pwrite(fd, b'x', 0)
        os._exit(0)
    os.waitpid(c, 0)
"""


def storm(ring_pages: str, pipe_bytes: int, stall: float, forks: int, storms: int) -> dict:
    """One recorded storm with the reader stalled ``stall`` seconds of every ``2 * stall``."""
    recorder.RING_PAGES, recorder.PIPE_BYTES = ring_pages, pipe_bytes
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o777)
        rec = recorder.Recorder(UID, Path(tmp)).__enter__()
        start = time.monotonic()
        code = STORM.format(forks=forks, path=f"{tmp}/f")
        procs = [subprocess.Popen(["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups",
                                   "/usr/bin/python3", "-c", code]) for _ in range(storms)]
        done = threading.Event()

        def stall_reader() -> None:
            while stall and not done.is_set():
                with rec._lock:  # the reader thread waits on this lock for every line it reads
                    time.sleep(stall)
                time.sleep(stall)

        staller = threading.Thread(target=stall_reader, daemon=True)
        staller.start()
        for p in procs:
            p.wait()
        done.set()
        staller.join()
        seconds = time.monotonic() - start
        rec.__exit__()
        lost = sum(int(p.split()[2]) for p in rec.record.problems if p.startswith("eBPF: Lost "))
        return {"ring_pages": int(ring_pages), "pipe_kib": pipe_bytes >> 10, "stall_sec": stall,
                "storm_sec": round(seconds, 1), "forks_expected": forks * storms,
                "forks_recorded": len(rec.record.forks), "events_lost": lost,
                "complete": not rec.record.problems}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--forks", type=int, default=15000)
    ap.add_argument("--storms", type=int, default=3)
    ap.add_argument("--stalls", default="0,0.5,2,5", help="reader stalls to try, seconds")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    ours = (recorder.RING_PAGES, recorder.PIPE_BYTES)
    rows = []
    for pages, pipe in (("64", 64 << 10), ours):
        for stall in (float(s) for s in args.stalls.split(",")):
            row = storm(pages, pipe, stall, args.forks, args.storms)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
