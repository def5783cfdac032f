"""Attacks on the limits and on what a sandbox can see: unlinked files past the storage limit, widening
the CPU pinning, reading the host's layout from mountinfo and the command line, the host's /etc."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import required_tool_missing
from workbench.sandbox import cgroups

pytestmark = [pytest.mark.attack, pytest.mark.slow]
HAS_CGROUPS = cgroups.version() is not None
HAS_VOLUMES = shutil.which("mkfs.ext4") is not None


def test_unlinked_but_open_files_cannot_pass_the_storage_limit(attack):
    if not HAS_VOLUMES:
        required_tool_missing("mkfs.ext4 (sized volumes)")
    # eight files, opened, unlinked, then filled (12 MB each, under the 16 MB file limit): no walk of the
    # tree ever sees them
    script = """mkdir -p results
python3 - <<'PY'
import os
files = []
for i in range(8):
    fh = open(f"results/hidden{i}", "wb"); os.unlink(f"results/hidden{i}"); files.append(fh)
written = 0
try:
    for _ in range(12):
        for fh in files:
            fh.write(b"x" * (1 << 20)); fh.flush(); written += 1
except OSError as exc:
    print("stopped:", exc.strerror, "after", written, "MB", flush=True)
import time; time.sleep(5)
PY
"""
    out = attack(script)
    assert out.prov.limit == "storage" and "storage limit" in out.reasons  # 64 MB volume: 96 MB never fit
    assert "No space left on device" in out.stdout or out.prov.status == "failed"
    assert out.prov.limit_mechanisms["storage"] == "ext4-loop"


def test_widening_the_cpu_pinning_from_inside(attack):
    if not HAS_CGROUPS:
        required_tool_missing("writable cgroups (root)")
    out = attack("mkdir -p results\ntaskset -c -p 0-63 $$ > /dev/null 2>&1\n"
                 "grep Cpus_allowed_list /proc/self/status | cut -f2 > results/cpus.txt\n"
                 "python3 -c 'import os; os.sched_setaffinity(0, range(64)); print(sorted(os.sched_getaffinity(0)))'"
                 " > results/affinity.txt 2>&1\n")
    cores = out.prov.cores
    allowed = out.output("cpus.txt").strip()
    assert allowed == ",".join(map(str, cores)) or allowed == f"{cores[0]}-{cores[-1]}"
    assert out.output("affinity.txt").strip() == str(cores)  # still only the reserved cores
    assert out.prov.limit_mechanisms["cores"].startswith("cgroup")


def test_the_host_layout_is_not_visible_in_mountinfo_or_the_command_line(attack, tmp_path):
    out = attack("mkdir -p results\ncat /proc/self/mountinfo > results/mountinfo.txt\n"
                 "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done > results/cmdlines.txt\n")
    seen = out.output("mountinfo.txt") + out.output("cmdlines.txt")
    assert "workbench-replay-" not in seen and str(tmp_path) not in seen and "/tmp/" not in seen
    assert "--ro-bind" not in seen and "--setenv" not in seen  # bwrap's options came through a pipe


def test_the_hosts_etc_is_not_readable(attack, backend):
    out = attack("mkdir -p results\nls -A /etc > results/etc.txt\n"
                 "cat /etc/shadow /etc/sudoers /etc/ssh/ssh_host_rsa_key > results/secrets.txt 2>&1 || true\n")
    listed = set(out.output("etc.txt").split())
    assert {"passwd", "hosts"} <= listed and not {"sudoers", "ssh", "crontab"} & listed
    if backend == "bwrap":  # a minimal /etc of a few host files
        assert {"ld.so.cache", "ssl"} <= listed and not {"shadow", "gshadow", "machine-id"} & listed
    else:  # the image's own /etc: its shadow exists but is root's, and the sandbox is not root
        assert "Permission denied" in out.output("secrets.txt")
    assert "root:" not in out.output("secrets.txt") and "No such file" in out.output("secrets.txt")


def test_an_agent_racing_the_scoring_services_copy_reaches_no_private_file(tmp_path):
    """While an agent runs, it swaps a directory of its working copy for links to the task's private tests
    (by host path and through /proc/self/cwd) as fast as it can; the copies taken meanwhile hold none of it."""
    import os
    import tempfile
    import threading

    from tests.conftest import write_task
    from workbench.agents.public_task import PublicTask
    from workbench.agents.workspace import Workspace
    from workbench.task import load_task

    task = load_task(write_task(tmp_path / "task"))
    racer = (f"mkdir -p d/sub && echo mine > d/sub/f.txt\nend=$((SECONDS+5))\n"
             f"while [ $SECONDS -lt $end ]; do mv d d.real; ln -s {task.paths.tests} d; rm d;"
             " ln -s /proc/self/cwd d; rm d; mv d.real d; done\n")
    snaps = Path(tempfile.mkdtemp(prefix="snaps-"))
    os.chmod(snaps, 0o711)
    taken = []
    with Workspace(PublicTask.of(task), task.paths.starter, env_dir=None) as ws:
        agent = threading.Thread(target=ws.run, args=(racer, 30))
        agent.start()
        while agent.is_alive() and len(taken) < 40:
            dest = snaps / f"snap{len(taken)}"
            ws.snapshot(dest)
            taken.append(dest)
        agent.join()
    seen = "".join(p.read_text(errors="replace") for d in taken for p in d.rglob("*")
                   if p.is_file() and not p.is_symlink())
    assert len(taken) >= 3 and "mine" in seen  # the copies were taken while the agent raced
    assert "private-token-7f3a" not in seen and "mini task" not in seen  # SECRET.txt, rubric.json
    shutil.rmtree(snaps)
