"""A real single-node SLURM cluster in a temporary directory: munged, slurmctld and slurmd (Debian's packages).

Everything it needs is under ``root``: the munge key, socket, log and seed; ``slurm.conf`` with free
ports, state and spool directories, pid and log files. Nothing under /etc, /run or /var is read or
written, so it runs beside a system SLURM (or another test session's cluster). Client commands find it
through ``SLURM_CONF`` (``cluster.env``). The daemons run in the foreground as children of the test
process, are stopped on exit, and keep the niceness of whoever started them (so do the jobs).

    python -m tests.slurm_cluster     # start one, print sinfo and the start-up time, stop it
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sinfo", "sbatch", "squeue", "scancel")
NODE = "localhost"
PARTITION = "debug"


def available() -> bool:
    return all(shutil.which(p) or Path("/usr/sbin", p).is_file() for p in DAEMONS + CLIENTS)


def _sbin(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def machine_memory_mb() -> int:
    """What slurmd will find (MemTotal), a little less: a node configured with more than it has is drained."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024 * 9 // 10
    raise RuntimeError("no MemTotal in /proc/meminfo")


SLURM_CONF = """\
ClusterName=workbench-test
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=30
KillWait=2
MessageTimeout=10
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName={partition} Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


def _all_cores() -> None:
    try:
        os.sched_setaffinity(0, os.sched_getaffinity(1))
    except OSError:
        pass


class SlurmCluster:
    """``with SlurmCluster(root) as c: subprocess.run(["sinfo"], env=c.env)``; ``c.started_sec`` is how long
    it took from nothing to the node idle."""

    def __init__(self, root: Path, *, cpus: int = 2, memory_mb: int | None = None, timeout: float = 60):
        self.root = Path(root)
        self.cpus = cpus
        self.memory_mb = memory_mb or machine_memory_mb()
        self.timeout = timeout
        self.procs: dict[str, subprocess.Popen] = {}
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.socket"
        self.started_sec: float | None = None
        self.partition = PARTITION

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def log_tail(self, n: int = 3000) -> str:
        parts = []
        for name in ("munged", "slurmctld", "slurmd"):
            p = self.root / f"{name}.log"
            if p.is_file():
                parts.append(f"--- {name}.log\n{p.read_text(errors='replace')[-n:]}")
        return "\n".join(parts)

    def __enter__(self) -> SlurmCluster:
        t0 = time.monotonic()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self.started_sec = time.monotonic() - t0
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- starting -------------------------------------------------------------------------------------

    def _start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)  # munged refuses a socket directory others may write to
        for d in ("munge", "state", "spool"):
            (self.root / d).mkdir(exist_ok=True)
        os.chmod(self.root / "munge", 0o755)
        key = self.root / "munge" / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o600)
        self._spawn("munged", [_sbin("munged"), "--foreground", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={key}", f"--pid-file={self.root}/munge/munged.pid",
                               f"--seed-file={self.root}/munge/munged.seed",
                               f"--log-file={self.root}/munged.log"])
        self._wait(lambda: self.munge_socket.exists(), "munged's socket")
        ctld_port, slurmd_port = _free_ports(2)
        self.conf.write_text(SLURM_CONF.format(node=NODE, ctld_port=ctld_port, slurmd_port=slurmd_port,
                                               munge_socket=self.munge_socket, root=self.root, cpus=self.cpus,
                                               memory_mb=self.memory_mb, partition=self.partition))
        (self.root / "cgroup.conf").write_text("CgroupPlugin=autodetect\n")  # read by slurmd even unused
        # -i: ignore any saved state (a fresh cluster every time); -D: foreground
        self._spawn("slurmctld", [_sbin("slurmctld"), "-D", "-i", "-f", str(self.conf)])
        self._spawn("slurmd", [_sbin("slurmd"), "-D", "-N", NODE, "-f", str(self.conf)])
        self._wait(self.idle, "the node idle in sinfo")

    def _spawn(self, name: str, argv: list[str]) -> None:
        # without a task/affinity plugin a job inherits slurmd's CPU affinity: give it the machine's, whatever
        # the process starting the cluster was pinned to (a test session can be, by what ran before it)
        out = open(self.root / f"{name}.out", "wb")
        self.procs[name] = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=self.env, start_new_session=True, preexec_fn=_all_cores)
        out.close()

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not ready():
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    out = (self.root / f"{name}.out").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"{name} exited ({proc.returncode}) before {what}:\n{out}\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} after {self.timeout:g} s:\n{self.log_tail()}")
            time.sleep(0.2)

    # --- asking it ------------------------------------------------------------------------------------

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=30, check=check)

    def node_state(self) -> str:
        res = self.run("sinfo", "-h", "-N", "-n", NODE, "-o", "%T", check=False)
        return res.stdout.strip() if res.returncode == 0 else ""

    def idle(self) -> bool:
        return self.node_state() == "idle"

    def jobs(self) -> list[dict[str, str]]:
        """Every job in the queue: id, name, state (PENDING, RUNNING, ...)."""
        res = self.run("squeue", "-h", "-o", "%i|%j|%T")
        return [dict(zip(("id", "name", "state"), line.split("|"), strict=True))
                for line in res.stdout.splitlines() if line.strip()]

    # --- stopping -------------------------------------------------------------------------------------

    def stop(self) -> None:
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.run("scancel", "--full", "-u", "root", check=False)  # no job outlives the cluster
        for name in reversed(DAEMONS):
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.procs.clear()


if __name__ == "__main__":
    import tempfile

    with SlurmCluster(Path(tempfile.mkdtemp(prefix="workbench-slurm-"))) as c:
        print(c.run("sinfo").stdout)
        print(f"started in {c.started_sec:.2f} s; conf {c.conf}")
        t0 = time.monotonic()
        print(c.run("srun", "-N1", "-n1", "hostname").stdout.strip(), f"(srun {time.monotonic() - t0:.2f} s)")
