"""Cost of the sandbox's storage watchdog: one walk of a writable tree of N files (benchmarks/README.md)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from workbench.sandbox.watch import DiskWatch  # noqa: E402


def measure(n: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="watch-bench-"))
    try:
        for d in range(max(1, n // 1000)):
            sub = root / f"d{d}"
            sub.mkdir()
            for i in range(min(1000, n)):
                (sub / f"f{i}").write_bytes(b"x" * 100)
        watch = DiskWatch([root], max_mb=4096, max_files=10 * n)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            size, files = watch.usage()
            times.append(time.perf_counter() - t0)
        times.sort()
        walk = times[2]
        return {"files": files, "walk_s": round(walk, 4),
                "poll_interval_s": round(max(watch.interval, 4 * walk), 3),
                "cpu_share_while_polling": round(walk / max(watch.interval, 4 * walk), 3)}
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    print(json.dumps({str(n): measure(n) for n in (100, 10_000, 100_000)}, indent=1))
