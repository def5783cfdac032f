"""Attacks on the execution receipts by someone who has read the recorder's code: a program named by a path
string, writes made before a program ran or after it (by a fork that never executed anything, or by a process
that reused a real program's pid), packages "loaded" by an open that failed or by the submission's own files,
the host made to read a path the sandbox named, floods, and CPU padding after the domain import. Each is a
real replay under both sandboxes, with real programs: Python's sqlite3 (its library is in both the host's
/usr and the test image) stands for a domain library; PySCF and pw.x, where the host has them, are in
tests/security/test_receipts_science.py."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import threading

import pytest

from tests.security.conftest import hostile_task
from workbench.receipts import Receipts
from workbench.task import load_task

pytestmark = [pytest.mark.attack, pytest.mark.slow]


def receipts_task(root, rubric: dict, **limits):
    """The hostile mini task with ``rubric`` (and the receipts recorder, which every replay runs)."""
    from tests.conftest import required_tool_missing
    from workbench.sandbox.recorder import available

    ok, why = available()
    if not ok:
        required_tool_missing(f"the execution recorder ({why})")
    hostile_task(root, **limits)
    (root / "tests" / "rubric.json").write_text(json.dumps({"id": "r", "sub_tasks": rubric}))
    return load_task(root)


def leaf(id_: str, check: dict, category: str = "Execution") -> dict:
    return {"id": id_, "weight": 1, "task_category": category, "requirements": id_, "check": check}


def by_id(out) -> dict:
    return {lf.id: lf for lf in out.scores.leaves}


def receipts(out) -> Receipts:
    return Receipts.model_validate_json((out.trial / "replay" / "receipts.json").read_text())


FAKE_PW = """#!/bin/bash
mkdir -p results
echo '!    total energy              =     -15.84 Ry' > "results/$1.out"
while [ $SECONDS -lt 1 ]; do :; done
"""


def test_a_program_is_the_file_the_kernel_executed_not_a_path_string(attack, tmp_path, backend):
    """A script of the submission's named pw.x, run through paths that start like the system's, through /tmp
    and through a link, and the system's python3 run under the name pw.x: none is pw.x."""
    task = receipts_task(tmp_path / "t", [
        leaf("ran", {"kind": "ran", "program": "pw.x", "min_cpu_sec": 0.05}),
        leaf("written", {"kind": "written_by", "path": "results/*.out", "program": "pw.x"})])
    script = """mkdir -p results bin /tmp/bin /tmp/link
cp src/pw.sh bin/pw.x && chmod +x bin/pw.x && cp bin/pw.x /tmp/bin/pw.x
/usr/../home/submission/bin/pw.x dotdot
//home/submission/bin/pw.x slashes
/usr/bin/../../tmp/bin/pw.x tmp
ln -s /home/submission/bin/pw.x /tmp/link/pw.x && /tmp/link/pw.x link
ln -sf /usr/bin/python3 /tmp/bin/pw.x
/tmp/bin/pw.x -c "
import time; t = time.time()
while time.time() - t < 1: pass
open('results/python.out', 'w').write('!    total energy = -15.84 Ry')"
"""
    out = attack(script, files={"src/pw.sh": FAKE_PW}, task_=task)
    assert out.prov.status == "succeeded", out.reasons
    r, by = receipts(out), by_id(out)
    assert r.complete, r.problems
    assert by["ran"].score == 0.0 and "pw.x ran 0 time(s)" in by["ran"].rationale
    written = by["written"].rationale
    # docker mounts /tmp noexec: the script copied there does not run at all
    made = 5 if backend == "bwrap" else 4
    assert by["written"].score == 0.0 and f"{made} of {made} file(s) not written by pw.x" in written, written
    # what the kernel executed: bash (the script's interpreter) and python, each where it really lives
    fake = [im for p in r.processes for im in p.images if im.named and "pw.x" in im.named and not im.inherited]
    assert len(fake) == made and {im.name for im in fake} <= {"bash", r.runs_of("python3")[0].program}, fake
    assert {im.origin for im in fake if im.name == "bash"} == {"system", "environment"} & {
        im.origin for im in fake}  # bash itself is the system's; the script it ran is only its input
    assert all(im.name != "pw.x" for p in r.processes for im in p.images)


def test_writes_are_credited_to_whoever_made_them_when_they_made_them(attack, tmp_path):
    """The program (python with sqlite3 loaded) writes a file; a fork of the shell that never executes
    anything overwrites it; a shell writes into a file and then executes the program on the same descriptor.
    Only the honest file is the program's."""
    task = receipts_task(tmp_path / "t", [
        leaf(n, {"kind": "written_by", "path": f"results/{n}.json", "package": "libsqlite3"})
        for n in ("honest", "late", "before")])
    script = """mkdir -p results
python3 -c "import sqlite3, json; json.dump({'value': 42}, open('results/honest.json', 'w'))"
python3 -c "import sqlite3, json; json.dump({'value': 42}, open('results/late.json', 'w'))"
( printf '{"value": 7} ' > results/late.json )
sh -c 'printf "{\\"value\\": 7}"; exec python3 -c "import sqlite3"' > results/before.json
"""
    out = attack(script, task_=task)
    r, by = receipts(out), by_id(out)
    assert r.complete, r.problems
    assert by["honest"].score == 1.0, by["honest"].rationale
    assert by["late"].score == 0.0 and "written by bash" in by["late"].rationale, by["late"].rationale
    assert by["before"].score == 0.0 and "written by " in by["before"].rationale, by["before"].rationale
    writers = {r.writer_name(w) for w in r.writes_of("submission/results/before.json")}
    assert writers <= {"sh", "dash", "bash"}, writers  # the shell wrote it; the program that ran on it did not
    late = r.writes_of("submission/results/late.json")
    fork = next(p for p in r.processes if p.key == next(w.process for w in late if r.writer_name(w) == "bash"))
    assert fork.images[-1].inherited  # the subshell never executed anything: it ran its parent's program


REUSE = """mkdir -p results
echo "a scratch file of the shell's, deleted before the result exists" > results/scratch.txt
stat -c %i results/scratch.txt > results/scratch.ino
rm results/scratch.txt
python3 -c "
import json, os, sqlite3
json.dump({'value': 42}, open('results/out.json', 'w'))
print(os.stat('results/out.json').st_ino, open('results/scratch.ino').read().strip())"
"""


def test_a_file_made_on_a_freed_inode_owes_nothing_to_the_deleted_files_writers(attack, tmp_path, backend):
    """An honest replay deletes a scratch file written before the domain library was loaded; the result,
    written after, gets the freed inode. Its writer is the program that wrote it, not the scratch file's."""
    task = receipts_task(tmp_path / "t", [
        leaf("out", {"kind": "written_by", "path": "results/out.json", "package": "libsqlite3"})])
    out = attack(REUSE, task_=task)
    assert out.prov.status == "succeeded", out.reasons
    now, was = out.stdout.split()
    assert now == was, f"the inode was not reused ({now} vs {was}): the case did not happen"
    r, by = receipts(out), by_id(out)
    assert r.complete, r.problems
    assert by["out"].score == 1.0, by["out"].rationale


# a program typed in from Python (no compiler needed): open("results/out.json", O_WRONLY|O_CREAT|O_TRUNC), write,
# exit, each through int 0x80, which the kernel serves as 32-bit (compat) system calls, from a 32-bit ELF or from
# a 64-bit one (the same instructions mean the same in both modes)
COMPAT_ELF = """import struct, sys
bits, base, path, data = int(sys.argv[2]), 0x08048000, b"results/out.json", b'{"value": 7}'
heads = 84 if bits == 32 else 120
path_at = base + heads + 50
data_at = path_at + len(path) + 1
mov = lambda op, v: op + struct.pack("<I", v)
code = (mov(b"\\xb8", 5) + mov(b"\\xbb", path_at) + mov(b"\\xb9", 0x241) + mov(b"\\xba", 0o644) + b"\\xcd\\x80"
        + b"\\x89\\xc3" + mov(b"\\xb8", 4) + mov(b"\\xb9", data_at) + mov(b"\\xba", len(data)) + b"\\xcd\\x80"
        + mov(b"\\xb8", 1) + b"\\x31\\xdb\\xcd\\x80")
assert len(code) == 50
body = code + path + b"\\0" + data
n = heads + len(body)
if bits == 32:
    head = b"\\x7fELF\\x01\\x01\\x01" + bytes(9)
    head += struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, base + heads, 52, 0, 0, 52, 32, 1, 0, 0, 0)
    head += struct.pack("<8I", 1, 0, base, base, n, n, 7, 0x1000)
else:
    head = b"\\x7fELF\\x02\\x01\\x01" + bytes(9)
    head += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, base + heads, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    head += struct.pack("<IIQQQQQQ", 1, 7, 0, base, base, n, n, 0x1000)
open(sys.argv[1], "wb").write(head + body)
"""


@pytest.mark.parametrize("bits", [32, 64])
def test_32_bit_system_calls_make_the_receipts_incomplete(attack, tmp_path, backend, bits):
    """The syscall tracepoints the recorder reads writes from are not emitted for 32-bit system calls: a
    program the submission typed in (a 32-bit one, or a 64-bit one calling int 0x80) overwrites the honest
    program's result. Its writes are unseen, so the receipts say so and the result is credited to no one."""
    task = receipts_task(tmp_path / "t", [
        leaf("out", {"kind": "written_by", "path": "results/out.json", "package": "libsqlite3"})])
    script = f"""mkdir -p results
python3 -c "import json, sqlite3; json.dump({{'value': 42}}, open('results/out.json', 'w'))"
python3 src/mkelf.py ./prog {bits} && chmod +x ./prog && ./prog
cat results/out.json
"""
    out = attack(script, files={"src/mkelf.py": COMPAT_ELF}, task_=task)
    assert out.prov.status == "succeeded", out.reasons
    assert out.stdout.strip() == '{"value": 7}', f"the program did not run: {out.stdout!r}"
    r, by = receipts(out), by_id(out)
    assert not r.complete and any("32-bit" in p for p in r.problems), r.problems
    assert by["out"].score == 0.0, by["out"].rationale


CUT = {"collapse": "fallocate --collapse-range --offset 4096 --length 4096 results/rows.csv",
       "truncate": "truncate --size 4096 results/rows.csv"}


@pytest.mark.parametrize("cut", sorted(CUT))
def test_cutting_an_honest_results_blocks_out_makes_the_cutter_its_writer(attack, tmp_path, backend, cut):
    """The honest program writes three blocks of rows; a program that never writes a byte drops the failed
    ones (collapsing a range) or keeps only the first (cutting the file short): what it changed is credited
    to it, so the result is no longer the honest program's alone."""
    task = receipts_task(tmp_path / "t", [
        leaf("rows", {"kind": "written_by", "path": "results/rows.csv", "package": "libsqlite3"})])
    script = f"""mkdir -p results
python3 -c "
import sqlite3
with open('results/rows.csv', 'w') as f:
    for row in ('kept', 'failed', 'kept'):
        f.write((row + chr(10)) * (4096 // (len(row) + 1)) + '#' * (4096 % (len(row) + 1)))
"
{CUT[cut]}
wc -c < results/rows.csv; grep -c failed results/rows.csv || true
"""
    out = attack(script, task_=task)
    assert out.prov.status == "succeeded", out.reasons
    assert out.stdout.split() == [str(8192 if cut == "collapse" else 4096), "0"], out.stdout
    r, by = receipts(out), by_id(out)
    assert r.complete, r.problems
    writers = {r.writer_name(w) for w in r.writes_of("submission/results/rows.csv")}
    honest = {n for n in writers if n.startswith("python3")}
    assert honest and writers - honest == {cut.replace("collapse", "fallocate")}, writers
    assert by["rows"].score == 0.0, by["rows"].rationale


def test_setting_a_files_generation_makes_the_receipts_incomplete(attack, tmp_path):
    """A process that changes a file's generation (which would move its writes onto another file) leaves
    receipts that no check can pass."""
    task = receipts_task(tmp_path / "t", [
        leaf("out", {"kind": "written_by", "path": "results/out.json", "package": "libsqlite3"})])
    script = """mkdir -p results
python3 -c "
import fcntl, json, sqlite3
f = open('results/out.json', 'w'); json.dump({'value': 42}, f); f.flush()
try:
    fcntl.ioctl(f, 0x40087602, (12345).to_bytes(8, 'little'))
except OSError as e:
    print('setversion refused:', e)
"
"""
    out = attack(script, task_=task)
    r, by = receipts(out), by_id(out)
    assert not r.complete and any("generation" in p for p in r.problems), r.problems
    assert by["out"].score == 0.0, by["out"].rationale


CYCLE = """import json, os
honest = json.load(open("results/pid.json"))["pid"]
for _ in range(36000):  # more than pid_max (32768): one of these children gets the real program's host pid
    child = os.fork()
    if child == 0:
        fd = os.open("results/reuse.json", os.O_WRONLY)
        os.pwrite(fd, b'{"value": 7} ', 0)
        os._exit(0)
    os.waitpid(child, 0)
"""


def test_a_process_that_reuses_a_real_programs_pid_gets_none_of_its_credit(attack, tmp_path):
    """pid_max is 32768 here: a loop of forks (each writing, none executing anything) walks the whole pid
    space, so one child gets the host pid the program had. Processes are (pid, start time): that child is
    not the program."""
    task = receipts_task(tmp_path / "t", [
        leaf("reuse", {"kind": "written_by", "path": "results/reuse.json", "package": "libsqlite3"})],
        timeout_sec=240, max_files=2000)
    script = """mkdir -p results
python3 -c "import sqlite3, json, os; json.dump({'value': 42}, open('results/reuse.json', 'w'))
json.dump({'pid': os.getpid()}, open('results/pid.json', 'w'))"
python3 src/cycle.py
"""
    out = attack(script, files={"src/cycle.py": CYCLE}, task_=task)
    assert out.prov.status == "succeeded", out.reasons
    r, by = receipts(out), by_id(out)
    assert r.complete, r.problems
    writers = r.writes_of("submission/results/reuse.json")
    honest = next(w for w in writers if r.writer_is(w, package="libsqlite3"))
    reused = [w for w in writers if w.pid == honest.pid and w.process != honest.process]
    assert reused, "no child got the program's pid: the attack did not happen"
    assert not any(r.writer_is(w, package="libsqlite3") for w in reused)
    assert by["reuse"].score == 0.0 and "written by python3" in by["reuse"].rationale, by["reuse"].rationale


def test_a_failed_open_or_a_file_of_the_submission_loads_nothing(attack, tmp_path):
    """Opening a library path that does not exist, or the submission's own files named like the library
    and like a package, is not loading them."""
    task = receipts_task(tmp_path / "t", [
        leaf("loaded", {"kind": "loaded", "package": "libsqlite3"}),
        leaf("package", {"kind": "loaded", "package": "pyscf"}),
        leaf("written", {"kind": "written_by", "path": "results/value.json", "package": "libsqlite3"})])
    script = """mkdir -p results lib/site-packages/pyscf
echo x > lib/libsqlite3.so.0 && echo x > lib/site-packages/pyscf/__init__.py
python3 -c "
import json, os
for p in ('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.nope', '/usr/lib/python3/dist-packages/pyscf/__init__.py',
          '/nowhere/site-packages/pyscf/__init__.py'):
    try: open(p)
    except OSError: pass
open('lib/libsqlite3.so.0').read(); open('lib/site-packages/pyscf/__init__.py').read()
json.dump({'value': 42}, open('results/value.json', 'w'))"
"""
    out = attack(script, task_=task)
    r, by = receipts(out), by_id(out)
    assert r.complete, r.problems
    assert not r.loaders_of("libsqlite3") and not r.loaders_of("pyscf")
    assert all(by[k].score == 0.0 for k in ("loaded", "package", "written")), {k: v.rationale for k, v in by.items()}
    python = r.runs_of("python3")
    assert python and "submission/lib/libsqlite3.so.0" in python[-1].read  # seen, as a file of the package


SECRET = "#!/bin/sh\necho host secret\n"


def test_the_host_never_opens_a_path_the_sandbox_named(attack, tmp_path, backend):
    """The sandbox executes /usr/../tmp/NAME, where the host has a FIFO of that name (reading it would block
    the workbench for ever) and /usr/bin/../../tmp/NAME2, where the host keeps a secret file: neither is opened,
    the programs are the submission's, and no hash of a host file appears."""
    tag = os.urandom(4).hex()
    fifo, secret = f"/tmp/wb-fifo-{tag}", f"/tmp/wb-secret-{tag}"
    os.mkfifo(fifo)
    with open(secret, "w") as fh:
        fh.write(SECRET)
    os.chmod(secret, 0o700)
    task = receipts_task(tmp_path / "t", [leaf("ran", {"kind": "ran", "program": f"wb-fifo-{tag}"})])
    script = f"""mkdir -p results
printf '#!/bin/sh\\necho ran\\n' > {fifo} && chmod +x {fifo} && cp {fifo} {secret}
/usr/../tmp/wb-fifo-{tag}
/usr/bin/../../tmp/wb-secret-{tag}
"""
    done: dict = {}
    t = threading.Thread(target=lambda: done.setdefault("out", attack(script, task_=task)), daemon=True)
    try:
        t.start()
        t.join(timeout=180)
        assert not t.is_alive(), "the workbench blocked on a host FIFO the sandbox named"
    finally:
        if t.is_alive():  # unblock it
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        os.unlink(fifo)
        os.unlink(secret)
    out = done["out"]
    r = receipts(out)
    ran = [im for p in r.processes for im in p.images if im.named and tag in im.named]
    # the kernel executed the system's shell on the sandbox's scripts (docker's /tmp is noexec: nothing ran
    # there); nothing of the host's was read
    assert len(ran) == (2 if backend == "bwrap" else 0), ran
    assert all(im.name in ("sh", "dash") and im.origin == "system" for im in ran), ran
    assert all(im.sha256 != hashlib.sha256(SECRET.encode()).hexdigest() for p in r.processes for im in p.images)
    assert by_id(out)["ran"].score == 0.0


def test_a_flood_costs_the_host_a_bound_and_fails_the_submission(attack, tmp_path):
    """A million opens of a library, tens of thousands of processes and writes: the recorder keeps a bounded
    number of events, the workbench's memory stays bounded, the receipts say they are incomplete and the
    receipt check fails the submission (scored, not withheld)."""
    task = receipts_task(tmp_path / "t", [
        leaf("written", {"kind": "written_by", "path": "results/value.json", "package": "libsqlite3"})],
        timeout_sec=120)
    script = """mkdir -p results
python3 -c "
import os, json, sqlite3
lib = '/usr/lib/x86_64-linux-gnu/libsqlite3.so.0'
lib = lib if os.path.exists(lib) else sqlite3.__file__
for i in range(1_200_000):
    os.close(os.open(lib, os.O_RDONLY))
fd = os.open('results/flood.bin', os.O_CREAT | os.O_WRONLY)
os.ftruncate(fd, 8 << 20)
for i in range(20000):
    os.pwrite(fd, b'x', i)
    os.close(os.open('results/flood.bin', os.O_WRONLY))
os.close(fd)
json.dump({'value': 42}, open('results/value.json', 'w'))"
"""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = attack(script, task_=task)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    r, by = receipts(out), by_id(out)
    assert not r.complete and any("events" in p for p in r.problems), r.problems
    assert by["written"].score == 0.0 and by["written"].status == "scored", by["written"]
    assert "incomplete" in by["written"].rationale or "dropped" in by["written"].rationale or "events" in \
        by["written"].rationale, by["written"].rationale
    assert grown_mb < 400, f"the workbench grew by {grown_mb:.0f} MB recording a flood"


def test_every_write_of_a_burst_at_the_very_end_is_recorded(attack, tmp_path):
    """4,000 files written in the last instant of the replay: the recorder shows it read every event (one end
    marker per CPU) before the receipts are made, so none is missing and the receipts are complete."""
    task = receipts_task(tmp_path / "t", [
        leaf("burst", {"kind": "written_by", "path": "results/burst/*", "package": "libsqlite3",
                       "min_files": 4000})], max_files=6000, timeout_sec=120)
    script = """mkdir -p results/burst
exec python3 -c "
import sqlite3
for i in range(4000):
    with open(f'results/burst/{i}', 'w') as fh:
        fh.write(str(i))"
"""
    out = attack(script, task_=task)
    r, by = receipts(out), by_id(out)
    assert r.complete, r.problems
    assert sum(1 for k in r.files if k.startswith("submission/results/burst/")) == 4000
    assert by["burst"].score == 1.0, by["burst"].rationale


# Both spend a set amount of the process's own CPU time, not of wall time or of work: on a busy machine
# wall time buys less CPU, on a fast one a set query is over before the gate's 0.5 s (CI saw 0.44 s).
PADDING = """import sqlite3, json, time
while time.process_time() < 2.5:  # padding: the interpreter's own loop, after the domain library's import
    sum(i * i for i in range(1000))
json.dump({"value": 42}, open("results/value.json", "w"))
"""
REAL_WORK = """import sqlite3, json, time
con = sqlite3.connect(":memory:")
n = 0
while time.process_time() < 2.5:  # the library's own work, a query of about 0.1 s at a time
    n += con.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500000) "
                     "SELECT count(*) FROM c WHERE x % 7 = 3").fetchone()[0]
json.dump({"value": 42, "n": n}, open("results/value.json", "w"))
"""


def test_cpu_padding_after_the_domain_import_is_not_domain_cpu(attack, tmp_path):
    """Two and a half seconds of an interpreter loop after importing the library meet a CPU gate on the
    processes that loaded it (``loaded``, documented as such), but not one on CPU inside the library
    (``cpu_in``); the library doing the work meets both."""
    rubric = [leaf("loaded", {"kind": "loaded", "package": "libsqlite3", "min_cpu_sec": 1.0}),
              leaf("inside", {"kind": "cpu_in", "library": "libsqlite3", "min_cpu_sec": 0.5})]
    task = receipts_task(tmp_path / "t", rubric)
    padded = by_id(attack("mkdir -p results\npython3 src/run.py\n", files={"src/run.py": PADDING}, task_=task))
    assert padded["loaded"].score == 1.0  # the gate this attack beats: why cpu_in exists
    assert padded["inside"].score == 0.0 and "most CPU went to python3" in padded["inside"].rationale, \
        padded["inside"].rationale
    real = by_id(attack("mkdir -p results\npython3 src/run.py\n", files={"src/run.py": REAL_WORK}, task_=task))
    assert real["inside"].score == 1.0, real["inside"].rationale
