"""Execution receipts: what a replay actually ran, as recorded from outside the sandbox.

``replay/receipts.json`` (the workbench writes it beside the provenance, which holds its digest):

* one entry per process: the program it executed (its path inside the sandbox, where that path lives:
  ``system`` /usr, ``environment`` the task's environment, ``submission`` the package, ``tmp``), the
  program file's content hash, when it ran, its CPU seconds (user + system, all its threads, from the
  kernel's own accounting) and peak resident memory, the Python packages and shared libraries it
  loaded, and the files of the package it read and wrote;
* per file the replay wrote: every writer, with the content hash the file had when that writer closed
  it (so credit follows content, not names: a copy renamed over an output is the copier's);
* ``complete``: false when the recorder could not see everything (it was not available, or the kernel
  dropped events under a flood); every check that needs receipts then fails, since a submission could
  otherwise hide its work from them.

Programs are identified by where they live and their name (``pw.x`` under /usr or the environment),
never by a name alone: a program the submission ships, or copies to /tmp, does not count as the
domain software.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

Origin = Literal["system", "environment", "submission", "tmp", "unknown"]
SYSTEM_PREFIXES = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/etc/")
PACKAGE_DIRS = re.compile(r"/(?:site|dist)-packages/([A-Za-z0-9_.\-]+)")
O_ACCMODE, O_CREAT, O_TRUNC = 0o3, 0o100, 0o1000


class Write(BaseModel):
    pid: int
    sha256: str  # the file's content when this process closed it


class ProcessReceipt(BaseModel):
    pid: int
    ppid: int
    program: str  # the last program the process executed (its path inside the sandbox)
    programs: list[str] = Field(default_factory=list)  # every program it executed, in order
    origin: Origin
    sha256: str | None = None  # of the program file, where the workbench could read it
    started_sec: float | None = None  # since the replay's first exec
    ended_sec: float | None = None
    cpu_sec: float = 0.0
    peak_rss_mb: float | None = None
    packages: list[str] = Field(default_factory=list)  # Python packages it loaded (site/dist-packages)
    libraries: list[str] = Field(default_factory=list)  # shared libraries it loaded (file names)
    read: list[str] = Field(default_factory=list)  # evidence-relative files of the package it opened to read
    wrote: list[str] = Field(default_factory=list)  # evidence-relative files it closed after writing


class Receipts(BaseModel):
    complete: bool
    problems: list[str] = Field(default_factory=list)  # why not complete ("no receipts: ..." = not recorded)
    mechanism: dict[str, str] = Field(default_factory=dict)
    processes: list[ProcessReceipt] = Field(default_factory=list)
    files: dict[str, list[Write]] = Field(default_factory=dict)  # evidence-relative path -> its writers
    total_cpu_sec: float = 0.0

    # --- what checks ask ---------------------------------------------------------------------------

    def by_pid(self) -> dict[int, ProcessReceipt]:
        return {p.pid: p for p in self.processes}

    def runs_of(self, program: str) -> list[ProcessReceipt]:
        """Processes whose program is ``program`` (a name, e.g. ``pw.x``, or a path) from the system or the
        task's environment; a program the submission ships or copies does not count."""
        want = program.rstrip("/")
        return [p for p in self.processes if p.origin in ("system", "environment")
                and (p.program == want or Path(p.program).name == want)]

    def loaders_of(self, package: str) -> list[ProcessReceipt]:
        """Processes that loaded a Python package or a shared library of that name (``pyscf``,
        ``libmeep``)."""
        return [p for p in self.processes if package in p.packages
                or any(lib == package or lib.startswith(package + ".") or lib.startswith(package + "-")
                       for lib in p.libraries)]

    def writers_of(self, path: str, sha256: str | None = None) -> list[ProcessReceipt]:
        """The processes that wrote ``path`` (evidence-relative); with ``sha256``, only those whose write left
        exactly that content (the file as frozen)."""
        pids = self.by_pid()
        return [pids[w.pid] for w in self.files.get(path, []) if (sha256 is None or w.sha256 == sha256)
                and w.pid in pids]


# --- building them --------------------------------------------------------------------------------

def _origin(path: str, env_dir: str | None, image: bool = False) -> Origin:
    if env_dir and (path == env_dir or path.startswith(env_dir.rstrip("/") + "/")):
        return "environment"
    if path.startswith("/home/submission/"):
        return "submission"
    if path.startswith(("/tmp/", "/dev/shm/")):
        return "tmp"
    if path.startswith(SYSTEM_PREFIXES):
        return "system"
    if image and path.startswith("/") and not path.startswith(("/dev/", "/proc/", "/run/")):
        return "environment"  # the task's image, mounted read-only: nothing the submission wrote lives there
    return "unknown"


def _sha256(path: Path, cache: dict[str, str | None]) -> str | None:
    key = str(path)
    if key not in cache:
        try:
            h = hashlib.sha256()
            with open(path, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
            cache[key] = h.hexdigest()
        except OSError:
            cache[key] = None
    return cache[key]


def build(raw, *, workdir: str, work: Path, env_dir: str | None, image: str | None = None,
          total_cpu_sec: float | None = None) -> Receipts:
    """Receipts from a recorder's :class:`~workbench.sandbox.recorder.RawRecord`. ``workdir`` is the
    package's path inside the sandbox, ``work`` its path on the host (on the sandbox's volume); ``image``
    the container image the replay ran in (docker), whose programs are hashed as the container saw them."""
    wd = workdir.rstrip("/") + "/"
    host_work = str(work).rstrip("/") + "/"

    def evidence_path(sandbox_path: str) -> str | None:
        return "submission/" + sandbox_path[len(wd):] if sandbox_path.startswith(wd) else None

    in_image = image is not None
    t0 = min((ns for _, _, ns, _ in raw.execs), default=0)
    procs: dict[int, ProcessReceipt] = {}
    cache: dict[str, str | None] = {}
    volume_exec = {(f.pid, f.path): f.sha256 for f in raw.files if f.kind == "exec"}  # sandbox paths
    exec_paths: dict[int, list[str]] = {}
    for f in raw.files:
        if f.kind == "exec":
            exec_paths.setdefault(f.pid, []).append(f.path)
    for pid, ppid, ns, name in raw.execs:
        if not name.startswith("/") and exec_paths.get(pid):  # "./tool.sh": the file fanotify saw executed
            name = exec_paths[pid][-1]
        p = procs.get(pid)
        if p is None:
            p = procs[pid] = ProcessReceipt(pid=pid, ppid=ppid, program=name, origin=_origin(name, env_dir, in_image),
                                            started_sec=round((ns - t0) / 1e9, 6))
        p.programs.append(name)
        p.program, p.origin = name, _origin(name, env_dir, in_image)
        if p.origin in ("system", "environment"):
            p.sha256 = raw.program_hashes.get(name) if in_image else _sha256(Path(name), cache)
        elif p.origin == "submission":
            p.sha256 = volume_exec.get((pid, name)) or _sha256(Path(host_work + name[len(wd):]), cache)
    cpu: dict[int, int] = {}
    for pid, tid, ut, st, rss, ns in raw.exits:
        if pid not in procs:
            continue
        cpu[pid] = cpu.get(pid, 0) + ut + st
        p = procs[pid]
        if rss:
            p.peak_rss_mb = max(p.peak_rss_mb or 0.0, round(rss * 4096 / 2**20, 2))
        if pid == tid:
            p.ended_sec = round((ns - t0) / 1e9, 6)
    for pid, ns in cpu.items():
        procs[pid].cpu_sec = round(ns / 1e9, 4)
    packages: dict[int, set[str]] = {}
    libraries: dict[int, set[str]] = {}
    reads: dict[int, set[str]] = {}
    for pid, flags, name in raw.opens:
        if pid not in procs:
            continue
        if m := PACKAGE_DIRS.search(name):
            pkg = re.split(r"[.\-]", m.group(1))[0] if m.group(1).endswith((".py", ".so", ".pth")) else m.group(1)
            packages.setdefault(pid, set()).add(pkg.split("-")[0])
        base = name.rsplit("/", 1)[-1]
        if ".so" in base:
            libraries.setdefault(pid, set()).add(base)
        if flags & O_ACCMODE == 0 and not flags & (O_CREAT | O_TRUNC) and (rel := evidence_path(name)):
            reads.setdefault(pid, set()).add(rel)
    for pid, p in procs.items():
        p.packages = sorted(packages.get(pid, ()))
        p.libraries = sorted(libraries.get(pid, ()))
        p.read = sorted(reads.get(pid, ()))[:2000]
    files: dict[str, list[Write]] = {}
    for f in raw.files:
        # the event's descriptor names the file as the writer's mount namespace sees it (the sandbox's
        # path); a file written outside the sandbox's mounts would show the host path
        rel = evidence_path(f.path) or ("submission/" + f.path[len(host_work):] if f.path.startswith(host_work)
                                        else None)
        if f.kind != "close_write" or rel is None:
            continue
        files.setdefault(rel, []).append(Write(pid=f.pid, sha256=f.sha256))
        if f.pid in procs and rel not in procs[f.pid].wrote:
            procs[f.pid].wrote.append(rel)
    total = total_cpu_sec if total_cpu_sec is not None else sum(p.cpu_sec for p in procs.values())
    return Receipts(complete=raw.complete, problems=list(raw.problems)[:50], mechanism=raw.mechanism,
                    processes=sorted(procs.values(), key=lambda p: (p.started_sec or 0, p.pid)), files=files,
                    total_cpu_sec=round(total, 4))


UNAVAILABLE = "no receipts: "


def unavailable(why: str) -> Receipts:
    """Receipts of a replay that could not be recorded (the workbench's environment lacks the recorder, or
    nothing ran): incomplete, saying why."""
    return Receipts(complete=False, problems=[UNAVAILABLE + why], mechanism={"processes": "none"})
