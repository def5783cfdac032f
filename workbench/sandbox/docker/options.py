"""What a container of a :class:`~.base.SandboxSpec` is (every isolation setting of ``containers.create`` in
one place) and which limit stopped it: shared by the one-container-per-command backend (:mod:`.sandbox`)
and the one-container-per-session one (:mod:`.session`)."""

from __future__ import annotations

from pathlib import Path

from ..base import Limits, SandboxSetupError, SandboxSpec
from ..gpus import Held
from ..watch import MB

INNER_UID = 1000
POLL_SEC = 0.2
CGROUP_ROOT = Path("/sys/fs/cgroup")


def container_options(spec: SandboxSpec, image: str, uid: int = INNER_UID, cores: list[int] | None = None,
                      held: Held | None = None) -> dict:
    """The keyword arguments of ``containers.create``: every isolation setting in one place. ``cores``: the
    cpuset (host core ids reserved for this container, which it cannot widen from inside); ``held``: the GPUs
    reserved for it (their device nodes, and the driver's control nodes, are the only devices it gets)."""
    from docker.types import Ulimit

    if spec.network not in ("none", "host"):
        raise SandboxSetupError(f"docker sandbox: network policy {spec.network!r} is not supported (bwrap has it; "
                                "under docker use none or host)")
    lim: Limits = spec.limits
    tmp_mb = lim.tmp_mb
    gpu = held is not None and bool(held.gpus)
    return dict(
        image=image, working_dir=spec.workdir, environment={**spec.env, **(held.env() if gpu else {})},
        user=f"{uid}:{uid}", **({"devices": [f"{node}:{target}:rwm" for node, target in held.binds()]} if gpu else {}),
        network_mode="none" if spec.network == "none" else "host",
        cap_drop=["ALL"], security_opt=["no-new-privileges"], read_only=True, privileged=False,
        tmpfs={"/tmp": f"size={tmp_mb}m,mode=1777", "/dev/shm": f"size={max(1, tmp_mb // 4)}m,mode=1777"},
        mem_limit=f"{lim.memory_mb}m", memswap_limit=f"{lim.memory_mb}m", nano_cpus=int(lim.cpus * 1e9),
        pids_limit=lim.max_processes, **({"cpuset_cpus": ",".join(map(str, cores))} if cores else {}),
        ulimits=[Ulimit(name="nofile", soft=lim.max_open_files, hard=lim.max_open_files),
                 Ulimit(name="fsize", soft=lim.max_file_mb * MB, hard=lim.max_file_mb * MB),
                 Ulimit(name="core", soft=0, hard=0)],
        volumes={str(m.source): {"bind": m.target, "mode": "rw" if m.writable else "ro"} for m in spec.mounts},
        detach=True, stdin_open=False, tty=False, init=True,
    )


def limit_verdict(exceeded: str | None, oom: bool, timed_out: bool, peak: float | None, memory_mb: int,
                  what: str) -> tuple[str | None, str | None]:
    """(which limit stopped ``what``, why): the watchdog's reason first, else the OOM killer's, else time."""
    limit = ("storage" if exceeded and exceeded.startswith("storage") else "files" if exceeded
             else "memory" if oom else "time" if timed_out else None)
    if oom and not exceeded:
        exceeded = (f"memory limit: the {what} needed more than {memory_mb} MB and the container's OOM "
                    "killer stopped it" + (f" (peak {peak} MB)" if peak is not None else ""))
    return limit, exceeded
