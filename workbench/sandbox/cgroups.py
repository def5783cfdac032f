"""Kernel-enforced limits for one sandbox through cgroups (v1 controllers or the v2 unified tree).

Why not rlimits alone: RLIMIT_AS limits address space, not memory, so it kills Java and threaded
programs that reserve far more than they touch (measured: 64 threads fail at a 512 MB RLIMIT_AS and
run in a 200 MB memory cgroup), and a sandbox can widen ``taskset`` pinning itself. A cgroup gives:

* **memory**: resident memory (and swap) limit; the peak and whether the OOM killer acted are read
  back afterwards;
* **pids**: a process limit across every uid (RLIMIT_NPROC is per uid);
* **cpuset**: the reserved cores, which ``sched_setaffinity`` inside cannot widen;
* **cpu**: a CFS quota of ``cpus`` cores;
* **freezer**: stop every process at once (to copy a tree no process can race), and a kill that
  reaches every process, whatever its uid.

The launcher joins the cgroup before it execs the sandbox, so everything inside inherits it. Where the
host has no writable cgroups (not root, no controllers), :meth:`Cgroup.create` returns None and the
sandbox falls back to rlimits; which mechanism enforced what is recorded in the provenance.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

ROOT = Path(os.environ.get("WORKBENCH_CGROUP_ROOT", "/sys/fs/cgroup"))
PARENT = "workbench"
PERIOD_US = 100_000
MB = 1024 * 1024


def version() -> str | None:
    """"v1", "v2" or None: which cgroup interface this host offers the workbench (root only)."""
    if os.environ.get("WORKBENCH_CGROUPS", "1") == "0" or os.geteuid() != 0:
        return None
    if (ROOT / "memory" / "memory.limit_in_bytes").is_file():
        return "v1"
    controllers = ROOT / "cgroup.controllers"
    if controllers.is_file() and "memory" in controllers.read_text().split():
        return "v2"
    return None


def _write(path: Path, value: str | int) -> None:
    with open(path, "w") as fh:
        fh.write(str(value))


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


@dataclass
class Cgroup:
    name: str
    kind: str  # v1 | v2
    dirs: dict[str, Path]  # controller -> directory (v2: every controller shares one)
    mechanisms: dict[str, str] = field(default_factory=dict)

    # --- making one ----------------------------------------------------------------------------

    @classmethod
    def create(cls, name: str, *, memory_mb: int | None, max_processes: int | None, cores: list[int] | None,
               cpus: int | None) -> Cgroup | None:
        """A fresh cgroup with these limits, or None when the host offers none (rlimits then apply)."""
        kind = version()
        if kind is None:
            return None
        try:
            return cls._v1(name, memory_mb, max_processes, cores, cpus) if kind == "v1" else \
                cls._v2(name, memory_mb, max_processes, cores, cpus)
        except OSError as exc:
            log.warning("cgroups unavailable (%s); falling back to rlimits", exc)
            return None

    @classmethod
    def _v1(cls, name, memory_mb, max_processes, cores, cpus) -> Cgroup:
        dirs: dict[str, Path] = {}
        for ctrl in ("memory", "pids", "cpuset", "cpu", "freezer"):
            base = ROOT / ctrl
            if not base.is_dir():
                continue
            parent = base / PARENT
            parent.mkdir(exist_ok=True)
            if ctrl == "cpuset":  # a v1 cpuset child needs its parent's cpus and mems filled in first
                for f in ("cpuset.cpus", "cpuset.mems"):
                    if not (_read(parent / f) or "").strip():
                        _write(parent / f, (_read(base / f) or "").strip())
            d = parent / name
            d.mkdir()
            dirs[ctrl] = d
        cg = cls(name, "v1", dirs)
        try:
            cg._limit_v1(memory_mb, max_processes, cores, cpus)
        except OSError:
            cg.remove()
            raise
        return cg

    def _limit_v1(self, memory_mb, max_processes, cores, cpus) -> None:
        d = self.dirs
        if memory_mb and "memory" in d:
            _write(d["memory"] / "memory.limit_in_bytes", memory_mb * MB)
            swap = d["memory"] / "memory.memsw.limit_in_bytes"
            if swap.exists():
                _write(swap, memory_mb * MB)
            self.mechanisms["memory"] = "cgroup-v1 memory (resident + swap)"
        if max_processes and "pids" in d:
            _write(d["pids"] / "pids.max", max_processes)
            self.mechanisms["processes"] = "cgroup-v1 pids"
        if cores and "cpuset" in d:
            _write(d["cpuset"] / "cpuset.cpus", ",".join(map(str, cores)))
            _write(d["cpuset"] / "cpuset.mems", (_read(d["cpuset"].parent / "cpuset.mems") or "0").strip())
            self.mechanisms["cores"] = "cgroup-v1 cpuset"
        if cpus and "cpu" in d:
            _write(d["cpu"] / "cpu.cfs_period_us", PERIOD_US)
            _write(d["cpu"] / "cpu.cfs_quota_us", cpus * PERIOD_US)
            self.mechanisms["cpu_quota"] = f"cgroup-v1 cpu ({cpus} core(s))"
        if "freezer" in d:
            self.mechanisms["freezer"] = "cgroup-v1 freezer"

    @classmethod
    def _v2(cls, name, memory_mb, max_processes, cores, cpus) -> Cgroup:
        parent = ROOT / PARENT
        parent.mkdir(exist_ok=True)
        wanted = [c for c in ("memory", "pids", "cpuset", "cpu") if c in (_read(ROOT / "cgroup.controllers") or "")]
        for d in (ROOT, parent):
            try:
                _write(d / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
            except OSError:  # the root of a delegated tree may refuse what is already on
                pass
        d = parent / name
        d.mkdir()
        cg = cls(name, "v2", {c: d for c in (*wanted, "freezer")})
        try:
            if memory_mb:
                _write(d / "memory.max", memory_mb * MB)
                if (d / "memory.swap.max").exists():
                    _write(d / "memory.swap.max", 0)
                cg.mechanisms["memory"] = "cgroup-v2 memory.max (resident)"
            if max_processes and (d / "pids.max").exists():
                _write(d / "pids.max", max_processes)
                cg.mechanisms["processes"] = "cgroup-v2 pids.max"
            if cores and (d / "cpuset.cpus").exists():
                _write(d / "cpuset.cpus", ",".join(map(str, cores)))
                cg.mechanisms["cores"] = "cgroup-v2 cpuset"
            if cpus and (d / "cpu.max").exists():
                _write(d / "cpu.max", f"{cpus * PERIOD_US} {PERIOD_US}")
                cg.mechanisms["cpu_quota"] = f"cgroup-v2 cpu.max ({cpus} core(s))"
            cg.mechanisms["freezer"] = "cgroup-v2 cgroup.freeze"
        except OSError:
            cg.remove()
            raise
        return cg

    # --- using it ------------------------------------------------------------------------------

    def join(self) -> None:
        """Move the calling process into the cgroup (a launcher's preexec step; children inherit it)."""
        pid = str(os.getpid())
        for d in set(self.dirs.values()):
            _write(d / "cgroup.procs", pid)

    def procs(self) -> list[int]:
        seen: set[int] = set()
        for d in set(self.dirs.values()):
            seen.update(int(x) for x in (_read(d / "cgroup.procs") or "").split())
        return sorted(seen)

    def freeze(self, timeout: float = 5.0) -> bool:
        """Stop every process in the cgroup at once; True once the kernel reports them frozen."""
        d = self.dirs.get("freezer")
        if d is None:
            return False
        if self.kind == "v1":
            _write(d / "freezer.state", "FROZEN")
            done = lambda: (_read(d / "freezer.state") or "").strip() == "FROZEN"  # noqa: E731
        else:
            _write(d / "cgroup.freeze", 1)
            done = lambda: "frozen 1" in (_read(d / "cgroup.events") or "")  # noqa: E731
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def thaw(self) -> None:
        d = self.dirs.get("freezer")
        if d is not None:
            _write(d / ("freezer.state" if self.kind == "v1" else "cgroup.freeze"),
                   "THAWED" if self.kind == "v1" else 0)

    def kill(self) -> int:
        """SIGKILL every process in the cgroup until none is left; returns how many were signalled."""
        killed = 0
        for _ in range(50):
            pids = self.procs()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                except ProcessLookupError:
                    pass
            self.thaw()  # a frozen process dies only once thawed
            time.sleep(0.02)
        return killed

    def usage(self) -> dict[str, float | int | None]:
        """Peak resident memory (MB), OOM kills and process-limit hits since the cgroup was made."""
        mem = self.dirs.get("memory")
        peak = oom = None
        if mem is not None:
            raw = _read(mem / ("memory.max_usage_in_bytes" if self.kind == "v1" else "memory.peak"))
            peak = round(int(raw) / MB, 1) if raw and raw.strip().isdigit() else None
            events = _read(mem / ("memory.oom_control" if self.kind == "v1" else "memory.events")) or ""
            oom = next((int(line.split()[1]) for line in events.splitlines() if line.startswith("oom_kill ")), 0)
        pids_hit = None
        if "pids" in self.dirs:
            events = _read(self.dirs["pids"] / "pids.events") or ""
            pids_hit = next((int(line.split()[1]) for line in events.splitlines() if line.startswith("max ")), 0)
        return {"peak_memory_mb": peak, "oom_kills": oom, "process_limit_hits": pids_hit}

    def remove(self) -> None:
        """Kill what is left and delete the cgroup (a cgroup can only be removed when empty)."""
        self.kill()
        for d in set(self.dirs.values()):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
