"""The execution recorder: what ran in a sandbox, seen from outside it, as the kernel knows it.

Chosen by measurement (benchmarks/receipts_overhead.py; notes in SECURITY.md): ``strace -f`` (ptrace) saw
everything but cost 25-40 % on the demo's PySCF replay, and kprobes/fentry are not available on these hosts
(tracefs offers no kprobe_events). So, filtered by the sandbox's host uid, which nothing inside can change:

* **eBPF tracepoints and a CPU profile** (``bpftrace``, root, in the host's pid namespace: nothing inside can
  signal, detach or see it): every exec with the file the kernel executed (``mm->exe_file``: device, inode,
  its own name, where its text lies), new processes, successful opens (what the new descriptor refers to:
  device, inode and the dentry names above it, read from the kernel's file table, so a path handed to
  ``open`` means nothing and a failed open is not seen), executable memory (file mappings, anonymous or
  re-protected code), what makes a process's code unverifiable (``ptrace``, ``process_vm_writev``,
  executable ``shmat``, writing ``/proc/*/mem``, ``io_uring`` and AIO, whose writes are not seen), each thread's exit
  with the kernel's CPU and memory accounting, and 99 CPU samples a second of where each process's
  instructions were. Processes are (pid, start time).
* **writes, when they happen**: every process that puts bytes into a file of the sandbox's volume
  (``write`` and its kin, ``sendfile``, ``splice``, ``copy_file_range``, a shared writable mapping, or
  changing content without bytes: ``ftruncate``, ``fallocate`` punching, zeroing, collapsing or inserting) is
  recorded in its own context, once per (process, file, program), with the file's device, inode and
  generation (a new file on a freed inode is another file; setting a generation makes the record incomplete). So a
  file's writers are exactly who wrote it, whatever happened to its name, and nothing is hashed on the host
  (a flood of writes or closes costs one map lookup each, inside the kernel).

Every stream is bounded (events kept, distinct sample addresses, the kernel's de-duplication map); hitting a
bound, the kernel dropping events, or a stream that cannot be shown to have been read to its end makes the
record incomplete.
The end is proven, not waited for: once the sandbox is gone, the recorder makes one marker event on every
CPU (eBPF's buffers are per CPU and in order), and reads until each has come back.

Without bpftrace or root, nothing is recorded and the provenance says so. Nothing here reads a host file by a
name the sandbox chose: a program's content is hashed only after the file found at its (normalized, trusted)
path is shown to be the very inode the kernel executed (:func:`hash_host_programs`).
"""

from __future__ import annotations

import fcntl
import logging
import os
import posixpath
import secrets
import shutil
import signal
import stat
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path

from ..receipts.raw import PROC_FS, Exec, Exit, Fork, Mapping, Open, RawRecord, WriteEvent, kernel_dev, user_dev

log = logging.getLogger(__name__)

TRACEFS = Path("/sys/kernel/tracing")
READY = "WORKBENCH-RECORDER-READY"
SAMPLE_HZ = 99
MAX_LINES = 1_000_000  # events read from eBPF (each kept one is a few hundred bytes at most)
MAX_SAMPLE_KEYS = 500_000  # distinct (process, instruction address) sample keys
MAX_KEPT = 200_000  # of each kind of event kept (execs, forks, opens, mappings, writes, processes' exits)
MAX_PROGRAM_BYTES = 1 << 30
END_WAIT_SEC = 10.0

_FILE = r"""$f = (struct file *)*(curtask->files->fdt->fd + {fd});
  $i = (struct inode *)$f->f_inode;
  $sb = (struct super_block *)$i->i_sb;
  $d = (struct dentry *)$f->f_path.dentry;"""
# a write into a file of the volume ($4), printed once per (process, file, address space): exec makes a new
# one. The process is (pid, start time): a pid reused with a recycled address space is another key
_WROTE = r"""if ({fd} >= 0 && {fd} < curtask->files->fdt->max_fds) {{
    $w = (struct file *)*(curtask->files->fdt->fd + {fd});
    $wi = (struct inode *)$w->f_inode;
    $s = curtask->group_leader->start_time;
    $m = (uint64)curtask->mm;
    $g = $wi->i_generation;
    if (((struct super_block *)$wi->i_sb)->s_dev == $4 {mode}&& @wrote[pid, $s, $wi->i_ino, $g, $m] == 0) {{
      @wrote[pid, $s, $wi->i_ino, $g, $m] = 1;
      printf("%llu W %d %llu %llu %lu %u\n", $2, ME, nsecs, $wi->i_ino, $g);
    }}
  }}"""
_CHAIN = ("str($d->d_parent->d_parent->d_parent->d_name.name), str($d->d_parent->d_parent->d_name.name), "
          "str($d->d_parent->d_name.name), str($d->d_name.name)")
_ME = "pid, curtask->group_leader->start_time"
# every line starts with a nonce ($2): a name holding a newline cannot forge an event line. $1: the uid;
# $3: the recorder's own pid, whose kill(pid, 0) is the end marker; $4: the volume's device (kernel dev_t)
SCRIPT = r"""
BEGIN { printf("%s\n", "WORKBENCH-RECORDER-READY"); }
tracepoint:sched:sched_process_exec /uid == $1/ {
  $f = (struct file *)curtask->mm->exe_file;
  $i = (struct inode *)$f->f_inode;
  $sb = (struct super_block *)$i->i_sb;
  printf("%llu E %d %llu %d %llu %llu %u %lu %lx %lx %lx %s\n", $2, ME, curtask->real_parent->tgid,
         curtask->real_parent->group_leader->start_time, nsecs, $sb->s_dev, $i->i_ino, $sb->s_magic,
         curtask->mm->start_code, curtask->mm->end_code, str(((struct dentry *)$f->f_path.dentry)->d_name.name));
  printf("%llu F %d %llu %s\n", $2, ME, str(args->filename));
}
tracepoint:task:task_newtask /uid == $1 && !(args->clone_flags & 0x10000)/ {
  printf("%llu N %d %llu %d %llu\n", $2, ME, args->pid, nsecs);
}
tracepoint:syscalls:sys_exit_openat, tracepoint:syscalls:sys_exit_open, tracepoint:syscalls:sys_exit_openat2,
tracepoint:syscalls:sys_exit_creat /uid == $1 && args->ret >= 0/ {
  FILE_RET
  printf("%llu O %d %llu %llu %u %u %lu %lx %s/%s/%s/%s\n", $2, ME, nsecs, $f->f_mode & 3, $sb->s_dev, $i->i_ino,
         $sb->s_magic, CHAIN);
}
tracepoint:syscalls:sys_enter_mmap /uid == $1 && (args->prot & 4)/ { @mmap[tid] = (args->fd, args->len, args->prot); }
tracepoint:syscalls:sys_exit_mmap /@mmap[tid].2/ {
  if (args->ret > 0) {
    if (@mmap[tid].0 >= 0) {
      FILE_MAP
      $t = nsecs;
      printf("%llu M %d %llu %llu %lx %lu %d %u %lu %lx %s/%s/%s/%s\n", $2, ME, $t, args->ret, @mmap[tid].1,
             @mmap[tid].2, $sb->s_dev, $i->i_ino, $sb->s_magic, CHAIN);
      printf("%llu P %d %llu %llu %s/%s\n", $2, ME, $t,
             str($d->d_parent->d_parent->d_parent->d_parent->d_parent->d_name.name),
             str($d->d_parent->d_parent->d_parent->d_parent->d_name.name));
    } else {
      printf("%llu A %d %llu %llu %lx %lu\n", $2, ME, nsecs, args->ret, @mmap[tid].1);
    }
  }
  delete(@mmap[tid]);
}
tracepoint:syscalls:sys_enter_mprotect, tracepoint:syscalls:sys_enter_pkey_mprotect /uid == $1 && (args->prot & 4)/ {
  printf("%llu A %d %llu %llu %lx %lu\n", $2, ME, nsecs, args->start, args->len);
}
tracepoint:syscalls:sys_enter_mremap /uid == $1 && (args->flags & 2)/ {
  printf("%llu A %d %llu %llu %lx %lu\n", $2, ME, nsecs, args->new_addr, args->new_len);
}
tracepoint:syscalls:sys_enter_write, tracepoint:syscalls:sys_enter_pwrite64, tracepoint:syscalls:sys_enter_writev,
tracepoint:syscalls:sys_enter_pwritev, tracepoint:syscalls:sys_enter_pwritev2 /uid == $1/ { WROTE(args->fd) }
tracepoint:syscalls:sys_enter_sendfile64 /uid == $1/ { WROTE(args->out_fd) }
tracepoint:syscalls:sys_enter_splice /uid == $1/ { WROTE(args->fd_out) }
tracepoint:syscalls:sys_enter_copy_file_range /uid == $1/ { WROTE(args->fd_out) }
// changing content without writing bytes: cutting a file short, or punching, zeroing, collapsing or inserting
// ranges (fallocate modes other than plain allocation), which could drop or move an honest program's blocks
tracepoint:syscalls:sys_enter_ftruncate /uid == $1/ { WROTE(args->fd) }
tracepoint:syscalls:sys_enter_fallocate /uid == $1 && args->mode > 1/ { WROTE(args->fd) }
tracepoint:syscalls:sys_enter_mmap /uid == $1 && (args->flags & 1) && args->fd >= 0/ { WROTE_MAP(args->fd) }
tracepoint:syscalls:sys_enter_io_uring_setup /uid == $1/ { printf("%llu T %d %llu io_uring\n", $2, ME); }
tracepoint:syscalls:sys_enter_io_submit /uid == $1/ { printf("%llu T %d %llu aio\n", $2, ME); }
tracepoint:syscalls:sys_enter_shmat /uid == $1 && (args->shmflg & 0x8000)/ { printf("%llu T %d %llu shmat\n", $2, ME); }
tracepoint:syscalls:sys_enter_ptrace /uid == $1 && args->request != 0/ { printf("%llu T %d %llu ptrace\n", $2, ME); }
tracepoint:syscalls:sys_enter_process_vm_writev /uid == $1/ { printf("%llu T %d %llu process_vm_writev\n", $2, ME); }
// a file's generation names which file of its inode a write went into: changing it (FS_IOC_SETVERSION and
// ext4's own, 64- and 32-bit) could move a write onto another file
tracepoint:syscalls:sys_enter_ioctl /uid == $1 && (args->cmd == 0x40087602 || args->cmd == 0x40047602 ||
    args->cmd == 0x40086604 || args->cmd == 0x40046604)/ { printf("%llu G %d %llu\n", $2, ME); }
// the syscalls:* tracepoints above are not emitted for 32-bit system calls (a 32-bit program, or int 0x80 from
// a 64-bit one: the kernel marks them TS_COMPAT while they run), so whatever such a call wrote is unseen: the
// record says so, once per process
tracepoint:raw_syscalls:sys_enter /uid == $1 && (curtask->thread_info.status & 2)/ {
  if (@compat[pid, curtask->group_leader->start_time] == 0) {
    @compat[pid, curtask->group_leader->start_time] = 1;
    printf("%llu C %d %llu %ld\n", $2, ME, args->id);
  }
}
profile:hz:HZ /uid == $1/ { printf("%llu S %d %llu %lx\n", $2, ME, reg("ip")); }
tracepoint:sched:sched_process_exit /uid == $1/ {
  printf("%llu X %d %d %llu %llu %llu %llu %llu\n", $2, pid, tid, curtask->group_leader->start_time,
         curtask->utime, curtask->stime, curtask->mm->hiwater_rss, nsecs);
}
tracepoint:syscalls:sys_enter_kill /pid == $3 && args->sig == 0 && args->pid == $3/ {
  printf("%llu END %d\n", $2, cpu); }
""".replace("WROTE_MAP(args->fd)", _WROTE.format(fd="args->fd", mode="&& ($w->f_mode & 2) "))\
   .replace("WROTE(args->fd)", _WROTE.format(fd="args->fd", mode="")) \
   .replace("WROTE(args->out_fd)", _WROTE.format(fd="args->out_fd", mode="")) \
   .replace("WROTE(args->fd_out)", _WROTE.format(fd="args->fd_out", mode="")) \
   .replace("FILE_RET", _FILE.format(fd="args->ret")).replace("FILE_MAP", _FILE.format(fd="@mmap[tid].0")) \
   .replace("CHAIN", _CHAIN).replace("ME", _ME).replace("HZ", str(SAMPLE_HZ))
STRLEN = "64"  # bpftrace's strings: a dentry name each (the BPF stack holds four of them)
MAP_KEYS = "131072"  # the write de-duplication map; when full, writes are printed again (more, never fewer)
# eBPF's buffer per CPU, in 4 KiB pages (bpftrace's default is 64) and bpftrace's output pipe: 4 MiB of locked
# host memory per CPU and a 1 MiB pipe let a fork storm outlive a reader stalled for a second or two (a garbage
# collection of a big host process) without losing events. Measured with three parallel storms of 15,000 forks
# and the reader stalled every other interval (benchmarks/recorder_stalls.py): 64 pages and a 64 KiB pipe lost
# 28,062 events with 0.5 s stalls; 64 pages and 1 MiB held 0.5 s stalls, not 2 s ones; 1024 pages and 1 MiB held
# 2 s stalls always and 5 s ones in one run of two
RING_PAGES = "1024"
PIPE_BYTES = 1 << 20
KERNEL_SPACE = 1 << 47


def available() -> tuple[bool, str]:
    """(the recorder can run here, why not)."""
    if os.environ.get("WORKBENCH_RECEIPTS", "1") == "0":
        return False, "switched off (WORKBENCH_RECEIPTS=0)"
    if os.geteuid() != 0:
        return False, "needs root (eBPF)"
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
    volumes = [m.volume for m in spec.mounts if m.writable and getattr(m.volume, "kind", "") == "ext4-loop"]
    if not volumes:
        # without a filesystem of its own, what the sandbox writes shares a device with the system's programs,
        # and the two could not be told apart
        return None, "the sandbox's writable tree has no volume of its own (loop devices unavailable)"
    try:
        return Recorder(uid, volumes[0].root).__enter__(), None
    except OSError as exc:
        return None, f"the recorder did not start: {exc}"


def _chain(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.split("/") if part)


class Recorder:
    """Record what the processes of host uid ``uid`` run, open, map and spend CPU on, and what they write on
    the volume mounted at ``volume_root`` (see the module's docstring)."""

    def __init__(self, uid: int, volume_root: Path):
        self.uid, self.volume_root = uid, volume_root
        self.volume_dev = kernel_dev(os.stat(volume_root).st_dev)
        version = subprocess.run(["bpftrace", "--version"], capture_output=True, text=True).stdout.strip()
        self.record = RawRecord(
            mechanism={
                "processes": f"eBPF tracepoints ({version}): exec (the executed file's device and inode), new "
                             "processes, successful opens (from the kernel's file table), executable mappings, "
                             "exit with the kernel's CPU and memory accounting; filtered by the sandbox's uid; "
                             "processes are (pid, start time)",
                "cpu": f"eBPF profile at {SAMPLE_HZ} Hz: which executable file or library each process's "
                       "instructions were in",
                "writes": "eBPF on write, pwrite, writev, sendfile, splice, copy_file_range, ftruncate, "
                          "content-changing fallocate and shared writable mappings of the sandbox's volume: the "
                          "writing process and the file's inode, as it happens"},
            writable_devs=frozenset({self.volume_dev}),
            # WORKBENCH_CPU_SAMPLES=0 leaves the CPU profile out (benchmarks/receipts_overhead.py measures its cost)
            sample_hz=0 if os.environ.get("WORKBENCH_CPU_SAMPLES") == "0" else SAMPLE_HZ)
        if not self.record.sample_hz:
            self.record.mechanism["cpu"] = "none (WORKBENCH_CPU_SAMPLES=0)"
        self._ready = threading.Event()
        self._ends: set[int] = set()
        self._lines = 0
        self._last_map: dict[tuple[int, int, int], int] = {}  # file mappings whose "P" line is still to come
        self._opened: set[tuple[int, int, int, int]] = set()
        self._proc: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None
        self._stopped = False
        self._closed = False
        self._lock = threading.Lock()

    def __enter__(self) -> Recorder:
        self._nonce = str(secrets.randbits(62))
        script = SCRIPT if self.record.sample_hz else "\n".join(
            line for line in SCRIPT.splitlines() if not line.startswith("profile:"))
        self._proc = subprocess.Popen(
            ["bpftrace", "-e", script, str(self.uid), self._nonce, str(os.getpid()), str(self.volume_dev)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "BPFTRACE_STRLEN": STRLEN,
                 "BPFTRACE_MAP_KEYS_MAX": MAP_KEYS, "BPFTRACE_PERF_RB_PAGES": RING_PAGES})
        try:
            fcntl.fcntl(self._proc.stdout, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:  # above /proc/sys/fs/pipe-max-size: the default pipe, and the ring still holds a stall
            pass
        self._reader = threading.Thread(target=self._read, daemon=True, name="recorder-bpftrace")
        self._reader.start()
        if not self._ready.wait(timeout=30):
            self.__exit__()
            raise OSError("bpftrace did not attach its probes within 30 s: " + " | ".join(self.record.problems[-3:]))
        return self

    # --- reading ------------------------------------------------------------------------------------------

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        mark = self._nonce.encode() + b" "
        try:
            for raw in self._proc.stdout:
                with self._lock:
                    if self._closed:  # the record was handed over: the rest is drained, not kept
                        continue
                    if raw.startswith(mark):
                        self._event(raw[len(mark):].decode("utf-8", "surrogateescape").rstrip("\n"))
                    elif raw.strip() == READY.encode():
                        self._ready.set()
                    elif raw.startswith(b"Lost ") or b" lost " in raw.lower():
                        self._problem(f"eBPF: {raw.decode(errors='replace').strip()[:200]}")
                    # anything else: bpftrace's own messages, or the rest of a name that held a newline
        except Exception as exc:  # never a silent stop
            self._problem(f"eBPF: the reader failed ({type(exc).__name__}: {exc})")

    def _problem(self, text: str) -> None:
        if text not in self.record.problems and len(self.record.problems) < 20:
            self.record.problems.append(text)

    def _event(self, line: str) -> None:
        rec = self.record
        kind, _, rest = line.partition(" ")
        if kind == "END":
            self._ends.add(int(rest))
            return
        self._lines += 1
        if self._lines > MAX_LINES:
            self._problem(f"eBPF: more than {MAX_LINES} events; the rest were not kept")
            return
        try:
            if kind == "S":
                pid, start, ip = rest.split(" ")
                ip_ = int(ip, 16)
                key = (int(pid), int(start), 0 if ip_ >= KERNEL_SPACE else ip_)
                if key in rec.samples or len(rec.samples) < MAX_SAMPLE_KEYS:
                    rec.samples[key] = rec.samples.get(key, 0) + 1
                else:
                    self._problem(f"eBPF: more than {MAX_SAMPLE_KEYS} distinct CPU sample addresses")
            elif kind == "O":
                pid, start, ns, mode, dev, ino, magic, chain = rest.split(" ", 7)
                o = Open(int(pid), int(start), int(ns), int(mode), int(dev), int(ino), int(magic, 16), _chain(chain))
                seen = (o.pid, o.start, o.dev, o.ino)
                if seen not in self._opened and self._keep(o) and self._room("opens", rec.opens):
                    self._opened.add(seen)  # once per process and file
                    rec.opens.append(o)
            elif kind == "E":
                pid, start, ppid, pstart, ns, dev, ino, magic, lo, hi, name = rest.split(" ", 10)
                if self._room("execs", rec.execs):
                    rec.execs.append(Exec(int(pid), int(start), int(ppid), int(pstart), int(ns), int(dev), int(ino),
                                          int(magic, 16), int(lo, 16), int(hi, 16), name))
            elif kind == "F":
                pid, start, name = rest.split(" ", 2)
                key = (int(pid), int(start))
                if key in rec.named or self._room("execs", rec.named):
                    named = rec.named.setdefault(key, [])
                    if len(named) < 64:
                        named.append(name)
            elif kind == "N":
                ppid, pstart, child, ns = rest.split(" ")
                if self._room("forks", rec.forks):
                    rec.forks.append(Fork(int(ppid), int(pstart), int(child), int(ns)))
            elif kind == "M":
                pid, start, ns, addr, length, prot, dev, ino, magic, chain = rest.split(" ", 9)
                if not self._room("mappings", rec.maps):
                    return
                rec.maps.append(Mapping(int(pid), int(start), int(ns), int(addr, 16), int(length), int(dev), int(ino),
                                        int(magic, 16), _chain(chain), writable=bool(int(prot) & 2)))
                if len(self._last_map) < 1024:
                    self._last_map[(int(pid), int(start), int(ns))] = len(rec.maps) - 1
            elif kind == "P":  # two more names above the last file mapping's (libraries deep in a package)
                pid, start, ns, chain = rest.split(" ", 3)
                i = self._last_map.pop((int(pid), int(start), int(ns)), None)
                if i is not None:
                    rec.maps[i] = replace(rec.maps[i], chain=_chain(chain) + rec.maps[i].chain)
            elif kind == "A":
                pid, start, ns, addr, length = rest.split(" ")
                if self._room("mappings", rec.maps):
                    rec.maps.append(Mapping(int(pid), int(start), int(ns), int(addr, 16), int(length)))
            elif kind == "W":
                pid, start, ns, ino, gen = rest.split(" ")
                if self._room("writes", rec.writes):
                    rec.writes.append(WriteEvent(int(pid), int(start), int(ns), self.volume_dev, int(ino), int(gen)))
            elif kind == "G":
                pid, _start = rest.split(" ")
                why = "a process set a file's generation"
                if not any(x.startswith(why) for x in rec.problems):
                    rec.problems.append(f"{why} (pid {pid}): its writes cannot be told apart")
            elif kind == "C":
                pid, _start, nr = rest.split(" ")
                why = "a process made 32-bit system calls"
                if not any(x.startswith(why) for x in rec.problems):
                    rec.problems.append(f"{why} (pid {pid}, call {nr}), which the recorder does not see: what "
                                        "it wrote is unknown")
            elif kind == "T":
                pid, start, what = rest.split(" ", 2)
                if len(rec.taints) < 50:
                    rec.taints.append(f"process {pid} used {what}")
            elif kind == "X":
                pid, tid, start, ut, st, rss, ns = rest.split(" ")
                key = (int(pid), int(start))
                was = rec.exits.get(key)
                if was is None and self._room("processes' exits", rec.exits):
                    rec.exits[key] = Exit(key[0], key[1], int(ut) + int(st), int(rss), int(ns))
                elif was is not None:  # another thread of the process: its CPU adds up
                    rec.exits[key] = Exit(key[0], key[1], was.cpu_ns + int(ut) + int(st), max(was.rss_pages, int(rss)),
                                          max(was.ns, int(ns)))
        except ValueError:
            self._problem(f"eBPF: unparsed line: {line[:200]}")

    def _room(self, kind: str, kept) -> bool:
        """Whether one more event of ``kind`` may be kept; when not, the record is incomplete."""
        if len(kept) < MAX_KEPT:
            return True
        self._problem(f"eBPF: more than {MAX_KEPT} {kind} events; the rest were not kept")
        return False

    def _keep(self, o: Open) -> bool:
        """Opens worth keeping: the volume's files read, shared libraries and Python packages, and /proc/*/mem
        opened for writing (which taints the whole replay's code)."""
        if o.magic == PROC_FS:
            if o.chain and o.chain[-1] == "mem" and o.mode & 2 and len(self.record.taints) < 50:
                self.record.taints.append(f"process {o.pid} opened /proc/*/mem for writing")
            return False
        if o.dev in self.record.writable_devs:
            return not o.mode & 2
        return (any(c.endswith("-packages") for c in o.chain)
                or (bool(o.chain) and ".so" in o.chain[-1]))

    # --- stopping -----------------------------------------------------------------------------------------

    def _mark_every_cpu(self) -> None:
        """One end marker per CPU: each CPU's events are in order, so its marker read means all of its
        earlier events were read."""
        def mark(cpu: int) -> None:
            try:
                os.sched_setaffinity(0, {cpu})
                os.kill(os.getpid(), 0)
            except OSError:
                pass

        for cpu in sorted(os.sched_getaffinity(0)):
            t = threading.Thread(target=mark, args=(cpu,), name="recorder-end")
            t.start()
            t.join()

    def __exit__(self, *exc) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._proc is not None and self._proc.poll() is None and self._ready.is_set():
            cpus = set(os.sched_getaffinity(0))
            deadline = time.monotonic() + END_WAIT_SEC
            while not cpus <= self._ends and time.monotonic() < deadline:
                self._mark_every_cpu()
                time.sleep(0.05)
            if not cpus <= self._ends:
                self._problem("eBPF: the recorder could not show that it read every event (no end marker)")
            if len(cpus) < (os.cpu_count() or 1):
                # events from CPUs this process may not run on have no marker: give them a moment
                time.sleep(0.5)
        with self._lock:  # the reader is between two lines: what it read is kept, nothing after it
            self._closed = True
        if self._proc is not None:
            # the markers showed every event was read, so nothing bpftrace would still say is wanted; its exit
            # (the kernel detaching the probes) takes seconds, so it is killed and reaped aside
            if self._proc.poll() is None:
                os.killpg(self._proc.pid, signal.SIGKILL)
            threading.Thread(target=self._proc.wait, daemon=True, name="recorder-reap").start()

    @property
    def events(self) -> int:
        return self._lines


# --- programs' content ----------------------------------------------------------------------------------

TRUSTED_ROOTS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "opt", "etc")


def normalized(path: str) -> bool:
    """An absolute path with nothing to resolve in its text (no ``..``, ``.``, ``//``, trailing ``/``)."""
    return path.startswith("/") and posixpath.normpath(path) == path and not path.startswith("//")


def hash_host_programs(record: RawRecord, roots: tuple[str, ...] = ()) -> None:
    """Hash the programs the sandbox executed from the host's read-only trees (bwrap shares them at the same
    paths): a named path is only a place to look, tried when it is normalized and under a trusted root
    (``/usr``..., or one of ``roots``, the task's environment); it is opened without reading (``O_PATH``), and
    the file is read only if it is a regular file with the very device and inode the kernel executed."""
    seen: set[tuple[int, int]] = set()
    for e in record.execs:
        key = (e.dev, e.ino)
        if key in seen or e.dev in record.writable_devs:
            continue
        seen.add(key)
        for path in record.named.get((e.pid, e.start), [])[::-1]:
            if not normalized(path) or not (path.split("/")[1] in TRUSTED_ROOTS
                                            or any(path.startswith(r.rstrip("/") + "/") for r in roots)):
                continue
            digest = _hash_if_same(path, e.dev, e.ino)
            if digest:
                record.program_hashes[key] = digest
                record.program_paths[key] = path
                break


def _hash_if_same(path: str, dev: int, ino: int) -> str | None:
    import hashlib

    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (user_dev(dev), ino):
            return None
        if st.st_size > MAX_PROGRAM_BYTES:
            return None
        h = hashlib.sha256()
        with open(f"/proc/self/fd/{fd}", "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)
