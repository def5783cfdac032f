"""bwrap vs docker: what a sandbox costs to start, and what each backend adds to a whole trial.

    .venv/bin/python benchmarks/backend_overhead.py --repeat 5 --json benchmarks/backend_overhead.json

Start latency: ``true`` run through each backend's ``run`` under the same spec (one core, the task's
limits, nothing recorded), interleaved bwrap/docker so machine noise hits both. Per-trial overhead: the demo
task's reference replay (PySCF), whole ``replay_trial()`` call and the wall time of reproduce.sh inside, with
receipts on as in a real trial. Per-call latency of an agent's tool call (``true``, ``--calls`` of each,
interleaved): docker with a container per call (``DockerSandbox.run``), docker with one session container and
an ``exec`` per call (``box.session``), bwrap per call. Needs a running engine and the demo image (built on the
first run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def start_latency(repeat: int) -> dict[str, list[float]]:
    from workbench.sandbox import get_sandbox
    from workbench.sandbox.base import Limits, SandboxSpec

    out: dict[str, list[float]] = {"bwrap": [], "docker": []}
    for _ in range(repeat):
        for name in out:
            box = get_sandbox(name)
            work = Path(tempfile.mkdtemp(prefix="bench-backend-"))
            box.prepare(work)
            limits = Limits(timeout_sec=60, memory_mb=512, cpus=1)
            spec = SandboxSpec(mounts=[], workdir="/", limits=limits, env={"PATH": "/usr/bin:/bin"}, network="none")
            t0 = time.perf_counter()
            res = box.run(["true"], spec, work / "out", work / "err")
            out[name].append(time.perf_counter() - t0)
            assert res.exit_code == 0, (name, (work / "err").read_text())
    return out


def call_latency(calls: int) -> dict[str, list[float]]:
    """Seconds per tool call, as a session's Workspace makes them (the session opened before the first)."""
    from workbench.sandbox import get_sandbox
    from workbench.sandbox.base import Limits, SandboxSpec

    work = Path(tempfile.mkdtemp(prefix="bench-calls-"))
    spec = SandboxSpec(mounts=[], workdir="/", limits=Limits(timeout_sec=60, memory_mb=512, cpus=1),
                       env={"PATH": "/usr/bin:/bin"}, network="none")
    docker, bwrap = get_sandbox("docker"), get_sandbox("bwrap")
    ways = {"docker_container_per_call": lambda: docker.run(["true"], spec, work / "out", work / "err"),
            "bwrap_per_call": lambda: bwrap.run(["true"], spec, work / "out", work / "err")}
    out: dict[str, list[float]] = {"docker_container_per_call": [], "docker_session_exec": [], "bwrap_per_call": []}
    with docker.session(spec) as session:
        ways["docker_session_exec"] = lambda: session.run(["true"], 60, work / "out", work / "err")
        for _ in range(calls):
            for name in out:
                t0 = time.perf_counter()
                res = ways[name]()
                out[name].append(time.perf_counter() - t0)
                assert res.exit_code == 0, (name, (work / "err").read_text())
    return out


def _p90(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]


def trial_overhead(repeat: int) -> dict[str, dict[str, list[float]]]:
    from workbench.replay.trial import replay_trial
    from workbench.sandbox.environments import install_env
    from workbench.task import load_task

    task = load_task(REPO / "tasks" / "h2-pes")
    install_env(task)
    out = {name: {"total": [], "wall": []} for name in ("bwrap", "docker")}
    for _ in range(repeat):
        for name in out:
            trial = Path(tempfile.mkdtemp(prefix="bench-backend-")) / "t"
            t0 = time.perf_counter()
            prov = replay_trial(task, task.paths.solution, trial, sandbox=name)
            out[name]["total"].append(time.perf_counter() - t0)
            out[name]["wall"].append(prov.wall_sec)
            assert prov.status == "succeeded", (name, prov.failure_reasons)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--trials", type=int, default=2, help="replays per backend (each ~15 s)")
    ap.add_argument("--calls", type=int, default=20, help="tool calls of `true` per way")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    starts = start_latency(args.repeat)
    per_call = call_latency(args.calls)
    trials = trial_overhead(args.trials)
    med = statistics.median
    result = {
        "measured_at": time.strftime("%Y-%m-%d"), "repeat": args.repeat, "trials": args.trials,
        "start_sec": {k: round(med(v), 3) for k, v in starts.items()},
        "replay_total_sec": {k: round(med(v["total"]), 2) for k, v in trials.items()},
        "replay_wall_sec": {k: round(med(v["wall"]), 2) for k, v in trials.items()},
        "calls": args.calls,
        "call_sec": {k: {"median": round(med(v), 3), "p90": round(_p90(v), 3)} for k, v in per_call.items()},
        "raw": {"start": starts, "trials": trials, "calls": per_call},
    }
    result["docker_over_bwrap"] = {
        "start": round(result["start_sec"]["docker"] / result["start_sec"]["bwrap"], 2),
        "replay_total": round(result["replay_total_sec"]["docker"] / result["replay_total_sec"]["bwrap"], 3),
        "session_call": round(result["call_sec"]["docker_session_exec"]["median"]
                              / result["call_sec"]["bwrap_per_call"]["median"], 2)}
    result["docker_session_speedup"] = round(result["call_sec"]["docker_container_per_call"]["median"]
                                             / result["call_sec"]["docker_session_exec"]["median"], 2)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
