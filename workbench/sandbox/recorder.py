"""The execution recorder: what ran in a sandbox, seen from outside it.

Chosen by measurement (benchmarks/receipts_overhead.py; notes in SECURITY.md): ``strace -f`` (ptrace)
saw everything but cost 25-40 % on the demo's PySCF replay, which starts thousands of threads, and
kprobes/fentry are not available on these hosts (tracefs refuses the function list). So:

* **eBPF tracepoints** (``bpftrace``, root): ``sched_process_exec`` (program, parent), ``openat``/``open``
  entries (what each process opened, so which shared libraries and Python packages it loaded), and
  ``sched_process_exit`` per thread (CPU user+system from the kernel's own task accounting, peak
  resident memory). Filtered by the sandbox's host uid, which no process inside can change. The
  tracer runs in the host's pid namespace as root: nothing inside can signal, detach or see it.
* **fanotify** on the sandbox's own volume (:mod:`.volume`): every file closed after writing, with the
  writer's pid and the file's content hash taken at that moment through the event's descriptor (so a
  rename or a later copy over it cannot move the credit), and every file executed from the volume.

Blind spots, by design conservative (a missing record fails the check that needs it, it never passes
one): opens through io_uring are not seen as opens (their writes still are: fanotify is VFS-level); a
thread's CPU counts toward its process; events the kernel drops under a flood make the receipts
``complete = false``. Without bpftrace or root, nothing is recorded and the provenance says so.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import secrets
import shutil
import signal
import struct
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

TRACEFS = Path("/sys/kernel/tracing")
READY = "WORKBENCH-RECORDER-READY"
# every line starts with a nonce ($2): a file name holding a newline cannot forge an event line
SCRIPT = r"""
BEGIN { printf("%s\n", "WORKBENCH-RECORDER-READY"); }
tracepoint:sched:sched_process_exec /uid == $1/ {
  printf("%llu E %d %d %llu %s\n", $2, pid, curtask->real_parent->tgid, nsecs, str(args->filename)); }
tracepoint:syscalls:sys_enter_openat /uid == $1/ {
  printf("%llu O %d %d %s\n", $2, pid, args->flags, str(args->filename)); }
tracepoint:syscalls:sys_enter_open /uid == $1/ {
  printf("%llu O %d %d %s\n", $2, pid, args->flags, str(args->filename)); }
tracepoint:sched:sched_process_exit /uid == $1/ {
  printf("%llu X %d %d %llu %llu %llu %llu\n", $2, pid, tid, curtask->utime, curtask->stime,
         curtask->mm->hiwater_rss, nsecs); }
"""
STRLEN = "200"  # bpftrace's longest string: enough for an environment's site-packages paths
FAN_CLASS_NOTIF, FAN_CLOEXEC, FAN_NONBLOCK = 0x0, 0x1, 0x2
FAN_MARK_ADD, FAN_MARK_FILESYSTEM = 0x1, 0x100
FAN_CLOSE_WRITE, FAN_OPEN_EXEC = 0x8, 0x1000
EVENT = struct.Struct("IBBHQii")


def available() -> tuple[bool, str]:
    """(the recorder can run here, why not)."""
    if os.environ.get("WORKBENCH_RECEIPTS", "1") == "0":
        return False, "switched off (WORKBENCH_RECEIPTS=0)"
    if os.geteuid() != 0:
        return False, "needs root (eBPF and fanotify)"
    if shutil.which("bpftrace") is None:
        return False, "bpftrace is not installed (Debian: apt-get install bpftrace)"
    if not (TRACEFS / "events").is_dir():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True)
        if not (TRACEFS / "events").is_dir():
            return False, f"tracefs is not mounted at {TRACEFS}"
    return True, ""


def start_for(spec, uid: int | None) -> tuple[Recorder | None, str | None]:
    """Start recording a sandbox run of host uid ``uid`` if ``spec.record`` asks for it: (the recorder, None)
    or (None, why nothing is recorded). ``uid`` is None when the backend cannot give the run a uid of its own
    (not root), since the probes filter by it. Both sandbox backends call this, so they record alike."""
    if not spec.record:
        return None, None
    ok, why = available()
    if not ok:
        return None, why
    if uid is None:
        return None, "needs root (a uid of the sandbox's own)"
    volume = next((m.volume for m in spec.mounts if m.writable and getattr(m.volume, "kind", "") == "ext4-loop"),
                  None)
    try:
        return Recorder(uid, volume.root if volume else None).__enter__(), None
    except OSError as exc:
        return None, f"the recorder did not start: {exc}"


@dataclass
class Written:
    pid: int
    path: str  # host path, at the time the event was read
    sha256: str
    bytes: int
    kind: str  # close_write | exec


@dataclass
class RawRecord:
    """What the recorder saw, before it is made into receipts (:mod:`workbench.receipts`)."""

    mechanism: dict[str, str]
    execs: list[tuple[int, int, int, str]] = field(default_factory=list)  # pid, ppid, ns, filename
    opens: list[tuple[int, int, str]] = field(default_factory=list)  # pid, flags, filename
    exits: list[tuple[int, int, int, int, int, int]] = field(default_factory=list)  # pid, tid, utime, stime, rss, ns
    files: list[Written] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # sha256 of programs by the path the sandbox ran them from, where the host path is not theirs (an image)
    program_hashes: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.problems


def _hash_fd(fd: int, cap: int = 1 << 30) -> tuple[str, int]:
    h, size, off = hashlib.sha256(), 0, 0
    while size < cap:
        chunk = os.pread(fd, 1 << 20, off)
        if not chunk:
            break
        h.update(chunk)
        off += len(chunk)
        size += len(chunk)
    return h.hexdigest(), size


class _Fanotify:
    """close_write and exec events of one filesystem, read by a thread while the sandbox runs."""

    def __init__(self, mount_point: Path, record: RawRecord):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
        self.fd = libc.fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, os.O_RDONLY | os.O_LARGEFILE)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "fanotify_init")
        if libc.fanotify_mark(self.fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_CLOSE_WRITE | FAN_OPEN_EXEC, -100,
                              os.fsencode(mount_point)) != 0:
            err = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(err, f"fanotify_mark {mount_point}")
        self.record = record
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True, name="recorder-fanotify")
        self.thread.start()

    def _drain(self) -> int:
        import select

        n = 0
        while True:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if not r:
                return n
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return n
            off = 0
            while off + EVENT.size <= len(buf):
                ev_len, _, _, _, mask, efd, pid = EVENT.unpack_from(buf, off)
                off += ev_len
                n += 1
                if efd < 0:  # the kernel's queue overflowed
                    self.record.problems.append("fanotify: events were dropped (queue overflow)")
                    continue
                try:
                    path = os.readlink(f"/proc/self/fd/{efd}")
                    digest, size = _hash_fd(efd)
                    kind = "exec" if mask & FAN_OPEN_EXEC else "close_write"
                    self.record.files.append(Written(pid, path, digest, size, kind))
                except OSError as exc:
                    self.record.problems.append(f"fanotify: an event could not be read ({exc.strerror})")
                finally:
                    os.close(efd)

    def _loop(self) -> None:
        while not self.stopping.is_set():
            self._drain()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)
        self._drain()
        os.close(self.fd)


class Recorder:
    """Record what the processes of host uid ``uid`` run, open and write (on ``volume_root``)."""

    def __init__(self, uid: int, volume_root: Path | None):
        self.uid, self.volume_root = uid, volume_root
        version = subprocess.run(["bpftrace", "--version"], capture_output=True, text=True).stdout.strip()
        self.record = RawRecord(mechanism={
            "processes": f"eBPF tracepoints ({version}): exec, open, exit with the kernel's CPU and memory "
                         "accounting, filtered by the sandbox's uid",
            "writes": "fanotify on the sandbox's volume: close-after-write with the content hash at that moment"
            if volume_root else "none (no volume of its own: writes are not attributed)"})
        self._lines: list[str] = []
        self._ready = threading.Event()
        self._fan: _Fanotify | None = None
        self._proc: subprocess.Popen | None = None

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for raw in self._proc.stdout:
            line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
            if line == READY:
                self._ready.set()
            else:
                self._lines.append(line)

    def __enter__(self) -> Recorder:
        if self.volume_root is not None:
            self._fan = _Fanotify(self.volume_root, self.record)
        self._nonce = str(secrets.randbits(62))
        self._proc = subprocess.Popen(["bpftrace", "-e", SCRIPT, str(self.uid), self._nonce], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, start_new_session=True,
                                      env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "BPFTRACE_STRLEN": STRLEN})
        threading.Thread(target=self._read, daemon=True, name="recorder-bpftrace").start()
        if not self._ready.wait(timeout=30):
            self.__exit__()
            raise OSError("bpftrace did not attach its probes within 30 s: " + " | ".join(self._lines[-3:]))
        return self

    def __exit__(self, *exc) -> None:
        if self._proc is not None and self._proc.poll() is None:
            quiet, last = time.monotonic(), len(self._lines)
            while time.monotonic() - quiet < 0.2 and time.monotonic() - quiet < 3:  # let the last events arrive
                time.sleep(0.05)
                if len(self._lines) != last:
                    quiet, last = time.monotonic(), len(self._lines)
            os.killpg(self._proc.pid, signal.SIGINT)
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
        if self._fan is not None:
            self._fan.stop()
            self._fan = None
        self._parse()

    def _parse(self) -> None:
        rec = self.record
        mark = self._nonce + " "
        for line in self._lines:
            if not line.startswith(mark):
                if line.startswith("Lost ") or " lost " in line.lower():
                    rec.problems.append(f"eBPF: {line.strip()}")
                continue  # bpftrace's own messages, or the rest of a file name that held a newline
            kind, _, rest = line[len(mark):].partition(" ")
            try:
                if kind == "E":
                    pid, ppid, ns, name = rest.split(" ", 3)
                    rec.execs.append((int(pid), int(ppid), int(ns), name))
                elif kind == "O":
                    pid, flags, name = rest.split(" ", 2)
                    rec.opens.append((int(pid), int(flags), name))
                elif kind == "X":
                    pid, tid, ut, st, rss, ns = rest.split(" ")
                    rec.exits.append((int(pid), int(tid), int(ut), int(st), int(rss), int(ns)))
            except ValueError:
                rec.problems.append(f"eBPF: unparsed line: {line[:200]}")
        self._lines = []
