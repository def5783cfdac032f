"""Attacks on resources: fork bomb, memory, disk, inodes, /tmp, stdout, time, sparse files."""

from __future__ import annotations

import shutil

import pytest

from tests.security.conftest import hostile_task, sandbox_processes

pytestmark = [pytest.mark.attack, pytest.mark.slow]


def test_fork_bomb(attack, tmp_path):
    task = hostile_task(tmp_path / "t", timeout_sec=8)
    out = attack("mkdir -p results\nbomb() { bomb | bomb & }; bomb\nsleep 30\n", task_=task)
    assert out.prov.status == "failed" and "timed out after 8 s" in out.reasons
    assert sandbox_processes(out.prov.sandbox["host_uid"]) == 0  # every process of the sandbox is gone
    assert "fork: retry" in out.stderr or "Resource temporarily unavailable" in out.stderr


def test_memory_flood(attack):
    out = attack("mkdir -p results\npython3 -c \"x = bytearray(4 * 1024**3)\"\n")
    assert out.prov.limits["memory_mb"] == 512 and out.prov.status == "failed"
    if out.prov.oom_killed:  # a memory cgroup: resident memory, the kernel's OOM killer, and the peak
        assert out.prov.limit == "memory" and "memory limit" in out.reasons and out.prov.peak_memory_mb <= 512
    else:
        assert "MemoryError" in out.stderr and "exited with code 1" in out.reasons


def test_disk_flood(attack):
    out = attack("mkdir -p results\nfor i in $(seq 1 100); do head -c 8M /dev/zero > results/f$i; done\nsleep 20\n")
    assert "storage limit" in out.reasons and "64 MB" in out.reasons
    assert "outputs were not frozen" in out.reasons
    assert not (out.trial / "evidence" / "submission" / "results").exists()
    assert shutil.disk_usage(out.trial).free > 0


def test_inode_flood(attack):
    out = attack("mkdir -p results/many\ncd results/many\nfor i in $(seq 1 20000); do : > f$i; done\nsleep 20\n")
    assert "file-count limit" in out.reasons and "2000" in out.reasons


def test_tmp_and_shm_floods_are_bounded_in_ram(attack):
    fill = "for i in $(seq 1 300); do head -c 8M /dev/zero > {d}/f$i || {{ echo '{d} full' >&2; break; }}; done\n"
    out = attack("mkdir -p results\n" + fill.format(d="/tmp") + fill.format(d="/dev/shm")
                 + "df -m /tmp | tail -1 > results/df.txt\nexit 0\n")
    assert "/tmp full" in out.stderr and "/dev/shm full" in out.stderr and "No space left on device" in out.stderr
    assert int(out.output("df.txt").split()[1]) <= 512  # /tmp is sized by the memory budget


def test_stdout_flood(attack):
    out = attack("mkdir -p results\nhead -c 50M /dev/urandom | base64\necho '{\"value\": 42}' > results/value.json\n")
    log = out.trial / "replay" / "stdout.log"
    assert log.stat().st_size < 1.1 * 1024 * 1024  # capped at 1 MB (plus the marker)
    assert out.prov.log_bytes_dropped["stdout"] > 60_000_000
    assert "further bytes dropped" in log.read_text(errors="replace")[-200:]
    assert out.prov.status == "succeeded"  # output volume alone is not a failure


def test_infinite_loop(attack, tmp_path):
    task = hostile_task(tmp_path / "t", timeout_sec=3)
    out = attack("mkdir -p results\nwhile :; do :; done\n", task_=task)
    assert out.prov.timed_out and "timed out after 3 s" in out.reasons


def test_five_gigabyte_sparse_file(attack):
    out = attack("mkdir -p results\ntruncate -s 5G results/big.bin || echo 'too large' >&2\n"
                 "dd if=/dev/zero of=results/sparse.bin bs=1 count=1 seek=15M 2>/dev/null\n"
                 "for i in 1 2 3 4 5; do cp --sparse=always results/sparse.bin results/s$i.bin; done\nsleep 20\n")
    # 5 GB exceeds the 16 MB file-size limit; five sparse 15 MB files exceed 64 MB of storage by apparent size
    assert "too large" in out.stderr and "File size limit exceeded" in out.stderr
    assert "storage limit" in out.reasons
    assert not (out.trial / "evidence" / "submission" / "results").exists()
