"""Running the delivered package once: copied into a fresh volume of its own, its output roots wiped and
what is not a source removed, ``bash reproduce.sh`` run in the sandbox, and every source hashed before and
after. :mod:`.trial` runs it once (and again with secret inputs) and freezes what it regenerated."""

from __future__ import annotations

import errno
import logging
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..io import Walk, copy_tree, remove_tree, tree_hashes
from ..paths import ENTRY
from ..sandbox import Limits, Mount, Sandbox, SandboxResult, SandboxSpec
from ..sandbox.base import sandbox_env
from ..sandbox.volume import Volume
from ..task import Task

log = logging.getLogger(__name__)

WORKDIR = "/home/submission"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _count_files(p: Path) -> int:
    if p.is_symlink() or not p.is_dir():
        return 1
    return sum(1 for e in Walk(p) if not e.is_dir)


# code and configuration formats; results formats (JSON, CSV, text tables, arrays, pickles, images) are data and need
# a task's declaration, so a result computed elsewhere and shipped as "config" cannot be copied into results/
# by a process that earns the receipts (issue 37's laundering pattern)
SOURCE_SUFFIXES = frozenset(
    ".py .sh .bash .jl .r .m .c .cc .cpp .cxx .h .hpp .f .f90 .f95 .for .rs .go .js .ts .java .scala .pl .lua "
    ".ipynb .toml .yaml .yml .ini .cfg .conf .in .ctl .md .rst .mk .cmake .patch".split())
SOURCE_NAMES = frozenset({"Makefile", "makefile", "Dockerfile", "LICENSE", "README", "CMakeLists.txt",
                          "requirements.txt"})
MAX_SOURCE_BYTES = 1 << 20  # a larger "source" is data


def is_source(rel: str, size: int, declared: list[str] | None) -> bool:
    """Whether a delivered file may take part in the replay: what the task declares (``[metadata.replay] sources``,
    globs), else code and config files up to 1 MB. Everything else (data, caches, binaries, archives) is
    removed before the replay: results must be regenerated, not shipped under another name."""
    import fnmatch

    if declared is not None:
        return any(fnmatch.fnmatchcase(rel, g) for g in declared)
    name = rel.rsplit("/", 1)[-1]
    return size <= MAX_SOURCE_BYTES and (name in SOURCE_NAMES or Path(name).suffix.lower() in SOURCE_SUFFIXES)


def quarantine(work: Path, outputs: list[str], declared: list[str] | None) -> list[str]:
    """Remove what is not a source from the staged package; returns the removed paths (for the provenance)."""
    out = []
    for e in list(Walk(work, skip_top=outputs)):
        if not e.is_dir and not (e.is_file and is_source(e.rel, e.st.st_size, declared)) and not e.is_link:
            os.unlink(e.path)
            out.append(e.rel)
    return out


def limits_for(task: Task, timeout: float | None = None) -> Limits:
    r, e = task.config.replay, task.config.environment
    return Limits(
        timeout_sec=float(timeout if timeout is not None else r.timeout_sec),
        memory_mb=e.memory_mb,
        cpus=e.cpus,
        max_processes=r.max_processes,
        max_open_files=r.max_open_files,
        max_file_mb=r.max_file_mb,
        max_storage_mb=e.storage_mb or r.max_storage_mb,
        max_files=r.max_files,
        max_log_mb=r.max_log_mb,
        gpus=e.gpus,
    )


@dataclass(frozen=True)
class Setting:
    """What every run of one replay shares: the task, the delivered package, the sandbox backend, the task's
    environment (its ``dir``, ``kind``, ``digest`` and, under docker, ``image``) and the image it runs in."""

    task: Task
    submission: Path
    box: Sandbox
    environment: dict
    image: Any
    limits: Limits
    holder: str = "a replay"  # recorded as the lock owner of the GPUs it holds


@dataclass
class PackageRun:
    """One run of the package in a fresh volume: what ran, what it changed, why it failed."""

    result: SandboxResult
    reasons: list[str]
    work: Path
    volume: Volume
    removed: dict[str, int]
    quarantined: list[str]
    skipped_links: list[str]
    refused: list[str]
    before: dict[str, str]
    after: dict[str, str]
    changed: list[str]
    stray: list[str]
    flood: bool
    started: str
    finished: str


def run_package(setting: Setting, limits: Limits, vol_dir: Path, stdout: Path, stderr: Path, *,
                inputs: bytes | None, record: bool) -> PackageRun:
    """Copy the package into a fresh volume, wipe its output roots and what is not a source, write the task's
    input file (``inputs``), and run ``bash reproduce.sh`` in the sandbox. The caller releases the volume,
    unless this raises (an interrupt, a sandbox that cannot start): then it is released here, so a rerun
    finds no mounted volume in its way."""
    volume = Volume.create(vol_dir, limits.max_storage_mb, limits.max_files)
    try:
        return _run_in(volume, setting, limits, vol_dir, stdout, stderr, inputs=inputs, record=record)
    except BaseException:
        volume.release()
        raise


def _run_in(volume: Volume, setting: Setting, limits: Limits, vol_dir: Path, stdout: Path, stderr: Path, *,
            inputs: bytes | None, record: bool) -> PackageRun:
    task, submission, box, environment, image = (setting.task, setting.submission, setting.box, setting.environment,
                                                 setting.image)
    outputs = task.config.replay.outputs
    work = volume.root / "submission"
    skipped_links: list[str] = []
    refused: list[str] = []
    too_big = None
    if submission.is_dir():
        try:
            copied = copy_tree(submission, work, metadata=False)
            skipped_links, refused = copied.hard_links, copied.refused
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            too_big = (f"the submission does not fit the storage limit ({limits.max_storage_mb} MB, "
                       f"{limits.max_files} files); nothing was run")
            remove_tree(work)
            work.mkdir()
    else:
        work.mkdir()
    removed = {}
    for root in outputs:
        p = work / root
        if p.exists() or p.is_symlink():
            removed[root] = _count_files(p)
            remove_tree(p)
        p.mkdir()
    quarantined = quarantine(work, outputs, task.config.replay.sources)
    if inputs is not None and not too_big:  # the task's, never the delivered copy (hashed: the run may not edit it)
        write_input(work, task.config.replay.secret_inputs.path, inputs)
    before = tree_hashes(work, exclude_top=outputs)
    box.prepare(vol_dir)

    mounts = [Mount(work, WORKDIR, writable=True, volume=volume)]
    if environment["dir"]:
        mounts.append(Mount(Path(environment["dir"]), environment["dir"], writable=False))
    spec = SandboxSpec(mounts=mounts, workdir=WORKDIR, limits=limits, image=image,
                       env=sandbox_env(environment["dir"], limits.cpus, keep_path=image is not None), network="none",
                       record=record, holder=setting.holder)
    started = now()
    reasons: list[str] = []
    if too_big or not (work / ENTRY).is_file():
        reasons.append(too_big or f"the submission has no {ENTRY}")
        stdout.write_bytes(b"")
        stderr.write_text(f"workbench: {reasons[-1]}; nothing was run\n")
        result = SandboxResult(exit_code=None, wall_sec=0.0, timed_out=False, signal=None, backend=box.name)
    else:
        log.info("replaying %s for task %s (timeout %.0f s)", submission, task.id, limits.timeout_sec)
        t0 = time.monotonic()
        result = box.run(["bash", ENTRY], spec, stdout, stderr)
        log.info("replay finished in %.1f s (exit %s)", time.monotonic() - t0, result.exit_code)
    finished = now()

    after = tree_hashes(work, exclude_top=outputs)
    changed = sorted(k for k in before if before[k] != after.get(k))
    stray = sorted(k for k in after if k not in before)
    flood = result.limit in ("storage", "files")
    if flood:  # its outputs stay behind: freezing them would copy the flood
        reasons += [result.limit_exceeded, "its outputs were not frozen as evidence"]
    elif result.limit_exceeded:
        reasons.append(result.limit_exceeded)
    elif result.timed_out:
        reasons.append(f"timed out after {limits.timeout_sec:.0f} s")
    elif result.exit_code not in (0, None):
        reasons.append(f"reproduce.sh exited with code {result.exit_code}"
                       + (f" (signal {result.signal})" if result.signal else ""))
    if changed:
        reasons.append(f"the replay modified its own sources: {', '.join(changed[:10])}")
    return PackageRun(result=result, reasons=reasons, work=work, volume=volume, removed=removed,
                      quarantined=quarantined, skipped_links=skipped_links, refused=refused, before=before,
                      after=after, changed=changed, stray=stray, flood=flood, started=started, finished=finished)


def write_input(root: Path, rel: str, data: bytes) -> None:
    """Write ``data`` at ``root/rel``, replacing whatever the package had there (a link is replaced, never
    followed)."""
    dest = root / rel
    root.mkdir(parents=True, exist_ok=True)
    parent = root
    for part in rel.split("/")[:-1]:
        parent = parent / part
        if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
            parent.unlink()
        parent.mkdir(exist_ok=True)
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        remove_tree(dest)
    dest.write_bytes(data)
