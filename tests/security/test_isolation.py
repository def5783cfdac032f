"""Attacks on isolation: network egress, private files, writes outside, privilege, signals."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.security.conftest import CANARY, host_canary, no_special_bits

pytestmark = [pytest.mark.attack, pytest.mark.slow]


def test_tcp_to_a_loopback_service_of_the_host(attack, host_http):
    port, hits = host_http
    out = attack(f"mkdir -p results\npython3 -c \"import urllib.request; "
                 f"urllib.request.urlopen('http://127.0.0.1:{port}/steal', timeout=3)\"\n")
    assert hits == []  # the host service never saw a request
    assert "URLError" in out.stderr or "Connection refused" in out.stderr
    assert out.prov.network == "none" and "exited with code 1" in out.reasons


def test_dns_resolution(attack):
    out = attack("mkdir -p results\ngetent hosts pypi.org || { echo 'dns failed' >&2; exit 7; }\n")
    assert "dns failed" in out.stderr and "exited with code 7" in out.reasons


def test_raw_and_packet_sockets(attack):
    script = ("mkdir -p results\npython3 -c \"import socket; "
              "socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\" 2>&1 | tail -1 >&2; "
              "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)\"\n")
    out = attack(script)
    assert out.stderr.count("PermissionError") == 2 and "exited with code 1" in out.reasons


def test_reading_private_task_files_by_absolute_path(attack, task):
    secret = task.root / "tests" / "SECRET.txt"
    out = attack(f"mkdir -p results\ncat {secret} > results/stolen.txt; cat {task.root}/solution/reproduce.sh "
                 ">> results/stolen.txt; exit 0\n")
    assert "private-token-7f3a" not in out.evidence_text() and "echo fine" not in out.evidence_text()
    assert out.stderr.count("No such file or directory") == 2


def test_reading_private_task_files_by_relative_path(attack, task):
    rel = os.path.relpath(task.root / "tests" / "SECRET.txt", "/home/submission")
    out = attack(f"mkdir -p results\ncat ../tests/SECRET.txt ../../tests/SECRET.txt {rel} > results/s.txt; exit 0\n")
    assert "private-token-7f3a" not in out.evidence_text()
    assert out.stderr.count("No such file or directory") == 3


def test_reading_the_harness_through_proc(attack, monkeypatch):
    monkeypatch.setenv("WORKBENCH_TEST_CANARY", CANARY)
    script = ("mkdir -p results\nfor p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null | tr '\\0' '\\n'; "
              "done > results/procs.txt\nls /proc | grep -c '^[0-9]' > results/count.txt\n"
              f"cat /proc/{os.getpid()}/environ > results/harness.txt 2>/dev/null; exit 0\n")
    out = attack(script)
    assert CANARY not in out.evidence_text()
    assert int(out.output("count.txt")) < 10  # its own pid namespace: only the sandbox's processes
    assert out.output("harness.txt") == ""


def test_symlinks_pointing_outside(attack, task, tmp_path):
    canary = host_canary(tmp_path)
    secret = task.root / "tests" / "SECRET.txt"
    script = (f"mkdir -p results\nln -s {secret} results/secret.txt\nln -s {canary} results/canary.txt\n"
              "ln -s /etc/shadow results/value.json\nln -s ../../../../../../ results/root\n")
    out = attack(script, files={"planted": "x"})
    # links are frozen as links; no reader follows them out of the evidence
    assert "private-token-7f3a" not in out.evidence_text() and CANARY not in out.evidence_text()
    from workbench.evidence import Evidence, MissingEvidence

    ev = Evidence(out.trial / "evidence")
    for rel in ("results/secret.txt", "results/canary.txt", "results/value.json", "results/root/etc/passwd"):
        with pytest.raises(MissingEvidence):
            ev.read_bytes(rel, 100)
    m1 = next(lf for lf in out.scores.leaves if lf.id == "m1")
    assert m1.score == 0.0 and m1.status == "missing_evidence"  # results/value.json -> /etc/shadow is no file


def test_hard_links_to_host_files(attack, tmp_path, backend):
    canary = host_canary(tmp_path)
    out = attack(f"mkdir -p results\nln {canary} results/a 2>&2; ln /etc/shadow results/b 2>&2; "
                 "ln /usr/bin/bash results/c 2>&2; exit 0\n")
    assert CANARY not in out.evidence_text() and "root:" not in out.evidence_text()
    assert out.stderr.count("ln: failed") == 3 and f"failed to access '{canary}'" in out.stderr  # not visible
    if backend == "bwrap":  # no /etc/shadow at all; /usr is another mount (EXDEV)
        assert out.stderr.count("Invalid cross-device link") == 1 and "failed to access '/etc/shadow'" in out.stderr
    else:  # the image's /etc/shadow and /usr are its own filesystem, not the volume's (EXDEV)
        assert out.stderr.count("Invalid cross-device link") == 2


def test_remount_bind_and_nested_namespaces(attack, tmp_path):
    marker = Path("/usr/workbench-escape-test")
    canary = host_canary(tmp_path)
    script = f"""mkdir -p results
mount -o remount,rw / 2>&1 || echo "remount / denied"
mount --bind /home/submission /usr 2>&1 || echo "bind denied"
unshare -rm sh -c 'mount --bind /tmp /usr' 2>&1 || echo "userns denied"
touch {marker} 2>&1 || echo "usr write denied"
echo pwned > {canary} 2>&1 || echo "canary write denied"
for d in / /home /dev /etc; do touch $d/x 2>/dev/null && echo "WROTE $d"; done
exit 0
"""
    out = attack(script)
    assert not marker.exists() and canary.read_text() == CANARY + "\n"
    for what in ("remount / denied", "bind denied", "userns denied", "usr write denied", "canary write denied"):
        assert what in out.stdout, out.stdout
    assert "WROTE" not in out.stdout


def test_setuid_binaries_and_privilege_escalation(attack):
    script = """mkdir -p results
cp /usr/bin/bash results/rootsh && chmod 6755 results/rootsh
ls -l results/rootsh >&2
results/rootsh -p -c 'id -u' > results/id.txt
su -c true root 2>&1 | head -1 >&2
"""
    out = attack(script)
    inner = str(out.prov.sandbox["inner_uid"])  # bwrap maps its host uid to 1000; docker runs as its host uid
    assert out.output("id.txt").strip() == inner != "0"  # no privileges inside: the setuid bit means nothing
    assert no_special_bits(out.trial / "evidence") == []  # and it does not survive into the evidence
    assert (out.trial / "evidence" / "submission" / "results" / "rootsh").stat().st_uid == 0


def test_signals_to_the_harness(attack):
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        out = attack("mkdir -p results\nsleep 30 &\nkill -9 -1\necho '{\"value\": 42}' > results/value.json\n"
                     "echo done\n")
        assert bystander.poll() is None  # a host process outside the sandbox is untouched; so is pytest
        # kill -1 reached only the sandbox's own processes: the replay went on and was recorded normally
        assert out.prov.status == "succeeded" and out.stdout.strip() == "done"
        assert out.scores.leaves[0].score == 1.0
    finally:
        bystander.kill()


def test_symlinks_and_hard_links_shipped_in_the_submission(task, tmp_path):
    """A delivered package that already contains links to private files (not made inside the sandbox)."""
    from tests.conftest import write_files
    from workbench.replay.trial import replay_trial
    from workbench.scoring import score_trial

    canary = host_canary(tmp_path)
    sub = write_files(tmp_path / "sub", {"reproduce.sh": "mkdir -p results\ncat data/*.in > results/copied.txt\n"
                                                         "echo '{\"value\": 42}' > results/value.json\n"})
    (sub / "data").mkdir()
    (sub / "data" / "secret.in").symlink_to(task.root / "tests" / "SECRET.txt")
    os.link(canary, sub / "data" / "canary.in")  # a hard link to a root-only host file
    (sub / "data" / "own.in").write_text("mine\n")
    os.link(sub / "data" / "own.in", sub / "data" / "own-again.in")  # links inside the package are fine
    prov = replay_trial(task, sub, tmp_path / "t")
    s = score_trial(task, tmp_path / "t")
    text = "".join(p.read_text(errors="replace") for p in (tmp_path / "t" / "evidence").rglob("*")
                   if p.is_file() and not p.is_symlink())
    assert CANARY not in text and "private-token-7f3a" not in text
    assert prov.hard_links_skipped == ["data/canary.in"]  # recorded, and not copied anywhere
    assert (tmp_path / "t" / "evidence" / "submission" / "results" / "copied.txt").read_text() == "mine\nmine\n"
    assert s.leaves[0].score == 1.0
