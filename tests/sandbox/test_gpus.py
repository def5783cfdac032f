"""GPUs, default-deny: with simulated devices (character devices made for the test and named as the NVIDIA
driver names its nodes; each is a clone of /dev/null, so opening and writing it works), a sandbox of a task
without ``gpus`` sees none, a ``gpus = 1`` sandbox sees exactly one and the driver's control nodes, a second
such sandbox waits for the first's GPU, the provenance names the device and its lock's owner, and a host
without the GPUs is refused in one line before any work. Real replays, both backends."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_files, write_task
from workbench.replay.provenance import Provenance
from workbench.replay.trial import replay_trial
from workbench.task import load_task

pytestmark = pytest.mark.slow

PROBE = """mkdir -p results
ls /dev | grep -i nvidia > results/devices.txt || true
echo "${CUDA_VISIBLE_DEVICES-unset}" > results/cuda.txt
for d in /dev/nvidia[0-9]*; do [ -e "$d" ] && echo written > "$d" && echo "$d" >> results/written.txt; done
date +%s.%N > results/start.txt
sleep "${HOLD:-0}"
date +%s.%N > results/end.txt
"""


def gpu_task(root: Path, gpus: int):
    write_task(root, timeout_sec=60)
    toml = (root / "task.toml").read_text()
    if gpus:
        toml = toml.replace("[environment]\n", f"[environment]\ngpus = {gpus}\n")
    (root / "task.toml").write_text(toml)
    (root / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\n")
    return load_task(root)


def probe(task, tmp_path: Path, name: str, backend: str, hold: float = 0) -> tuple[Provenance, Path]:
    script = PROBE.replace('"${HOLD:-0}"', str(hold))
    sub = write_files(tmp_path / f"sub-{name}", {"reproduce.sh": script})
    trial = tmp_path / name
    prov = replay_trial(task, sub, trial, sandbox=backend)
    assert prov.status == "succeeded", prov.failure_reasons
    return prov, trial / "evidence" / "submission" / "results"


def test_a_task_without_gpus_sees_none_of_the_hosts(simulated_gpus, tmp_path, backend):
    simulated_gpus(2)
    prov, out = probe(gpu_task(tmp_path / "t", 0), tmp_path, "none", backend)
    assert (out / "devices.txt").read_text() == "" and not (out / "written.txt").exists()
    assert prov.gpus == []


def test_a_gpus_1_sandbox_sees_exactly_one_and_the_provenance_names_it_and_its_holder(simulated_gpus, tmp_path,
                                                                                     backend):
    simulated_gpus(2)
    prov, out = probe(gpu_task(tmp_path / "t", 1), tmp_path, "one", backend)
    seen = set((out / "devices.txt").read_text().split())
    assert seen == {"nvidia0", "nvidiactl", "nvidia-uvm"}, seen
    assert (out / "written.txt").read_text().split() == ["/dev/nvidia0"]  # usable, not just listed
    assert (out / "cuda.txt").read_text().strip() == "0"  # set by the workbench
    (gpu,) = prov.gpus
    assert gpu["node"] == "/dev/nvidia0" and "the replay of one" in gpu["lock_owner"], gpu
    assert "not measured" in gpu["measured"]  # no NVML here: said, not invented
    saved = json.loads((tmp_path / "one" / "replay" / "provenance.json").read_text())
    assert saved["gpus"] == prov.gpus


def test_a_second_gpu_sandbox_waits_for_the_first_ones_gpu(simulated_gpus, tmp_path):
    simulated_gpus(1)
    task = gpu_task(tmp_path / "t", 1)
    got: dict[str, tuple] = {}

    def run(name: str) -> None:
        got[name] = probe(task, tmp_path, name, "bwrap", hold=3)

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    spans = sorted((float((out / "start.txt").read_text()), float((out / "end.txt").read_text()))
                   for _, out in got.values())
    assert len(spans) == 2 and spans[0][1] <= spans[1][0], f"both held the one GPU at once: {spans}"
    waited = max(prov.queued_sec for prov, _ in got.values())
    assert waited >= 2.0, waited  # the second waited for the first's GPU, and the wait is recorded


def test_a_host_without_the_gpus_is_refused_in_one_line_before_any_work(simulated_gpus, tmp_path):
    simulated_gpus(0)
    task = gpu_task(tmp_path / "t", 1)
    out = tmp_path / "runs"
    proc = run_cli("run", str(task.root), "--agent", "oracle", "--out", str(out))
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs 1 GPU(s) (this host has none" in lines[0], proc.stderr
    assert not out.exists() or not any(out.rglob("trial.json"))  # nothing was started


def test_a_link_planted_as_a_gpu_lock_is_refused_and_its_target_untouched(simulated_gpus, tmp_path):
    """The lock directory is shared by every local user: a lock file planted as a link to a file the
    workbench may write (it writes its holder's name into the lock) is refused, not followed."""
    from workbench.errors import WorkbenchError
    from workbench.sandbox import gpus

    simulated_gpus(1)
    canary = tmp_path / "precious.txt"
    canary.write_text("keep me\n")
    (gpus.lock_dir() / "gpu0.lock").symlink_to(canary)
    with pytest.raises(WorkbenchError, match="gpu0.lock"), gpus.reserve(1, "an attacker's victim"):
        pass
    assert canary.read_text() == "keep me\n"
