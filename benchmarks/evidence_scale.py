"""What a replay costs after its script at gigabytes of outputs, against ``cp -a`` and ``sha256sum`` of the
same tree in the same run (issue 41: the evidence path at the speed of the disk).

    .venv/bin/python benchmarks/evidence_scale.py --sizes 1 10 --json benchmarks/evidence_scale.json

For each size, half the bytes go into 256 MB files and half into 256 KB files (10 GB: 20 big files and
20,480 small ones). First the same generator writes the tree on the host, and ``cp -a`` and ``sha256sum``
of that fresh tree are timed (the baselines: one copy, one read); then a replay whose ``reproduce.sh`` runs
the generator under bwrap, with receipts recorded as every replay does. "After the script" is the
``replay_trial`` call's wall time less the script's own (the provenance's ``wall_sec``): staging the outputs
out of the sandbox's volume, hashing them into the manifest, sealing, receipts, releasing the volume. The
disk must hold about four times the largest size (the volume, the evidence, the baseline tree and its copy).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GENERATOR = """import os, sys
root, total = sys.argv[1], int(float(sys.argv[2]) * 2**30)
block = os.urandom(1 << 20)
def write(path, size):
    with open(path, "wb") as fh:
        for _ in range(size // len(block)):
            fh.write(block)
        fh.write(block[: size % len(block)])
os.makedirs(f"{root}/big", exist_ok=True)
for i in range(total // 2 // (256 << 20)):
    write(f"{root}/big/part{i:04d}.bin", 256 << 20)
small = total // 2 // (256 << 10)
for i in range(small):
    d = f"{root}/small/{i // 1000:03d}"
    os.makedirs(d, exist_ok=True)
    write(f"{d}/f{i:05d}.dat", 256 << 10)
"""


def _timed(argv: list[str], **kw) -> float:
    t0 = time.monotonic()
    subprocess.run(argv, check=True, **kw)
    return time.monotonic() - t0


def baselines(gb: float, work: Path) -> dict:
    """Write the tree on the host, then time cp -a of it and sha256sum of every file."""
    src, dst = work / "src", work / "dst"
    gen = work / "gen.py"
    gen.write_text(GENERATOR)
    write = _timed([sys.executable, str(gen), str(src), str(gb)])
    files = sum(len(f) for _, _, f in os.walk(src))
    subprocess.run(["sync"], check=True)
    cp = _timed(["cp", "-a", str(src), str(dst)])
    sha = _timed(["bash", "-c", f"find {src} -type f -print0 | xargs -0 sha256sum > /dev/null"])
    shutil.rmtree(src)
    shutil.rmtree(dst)
    return {"files": files, "write_sec": round(write, 2), "cp_a_sec": round(cp, 2), "sha256sum_sec": round(sha, 2)}


def replay_cost(gb: float, work: Path) -> dict:
    """A replay whose script writes the tree into results/: its wall after the script."""
    from tests.conftest import write_files, write_task
    from workbench.replay.trial import replay_trial
    from workbench.task import load_task

    root = write_task(work / "task", timeout_sec=3600, memory_mb=2048)
    mb = int(gb * 1024 * 1.1) + 256
    toml = (root / "task.toml").read_text().replace("memory_mb = 2048", f"memory_mb = 2048\nstorage_mb = {mb}")
    (root / "task.toml").write_text(toml + "max_files = 60000\nmax_file_mb = 512\n")
    task = load_task(root)
    sub = write_files(work / "sub", {"gen.py": GENERATOR, "reproduce.sh": f"python3 gen.py results {gb}\n"})
    t0 = time.monotonic()
    prov = replay_trial(task, sub, work / "trial")
    total = time.monotonic() - t0
    assert prov.status == "succeeded", prov.failure_reasons
    out = {"replay_sec": round(total, 2), "script_sec": round(prov.wall_sec, 2),
           "after_script_sec": round(total - prov.wall_sec, 2), "receipts_complete": prov.receipts_complete}
    subprocess.run(["chmod", "-R", "u+w", str(work / "trial")], check=False)
    shutil.rmtree(work / "trial")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1, 10])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--scratch", type=Path, default=None, help="where the trees are written (default: /tmp)")
    args = ap.parse_args()
    rows = []
    for gb in args.sizes:
        with tempfile.TemporaryDirectory(prefix="evidence-scale-", dir=args.scratch) as d:
            base = baselines(gb, Path(d))
            rep = replay_cost(gb, Path(d))
        row = {"gb": gb, **base, **rep, "after_script_over_cp_a": round(rep["after_script_sec"] / base["cp_a_sec"], 2)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        args.json.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
