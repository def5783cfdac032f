"""Stage 2, clean replay: re-run the delivered package from scratch and freeze what it regenerated.

Only the submission is copied into a fresh staging directory; the output roots the task declares
are wiped first (so results shipped in the submission cannot pass), every source file is hashed
before and after, and ``bash reproduce.sh`` runs in the sandbox with no network and the task's
limits. A replay that modifies or deletes a source fails, with the files named. The evidence holds the
sources as delivered plus the regenerated output roots; anything else the replay wrote is listed in
the provenance but is not evidence. The workbench, never the submission, writes
``replay/provenance.json``.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from . import receipts
from .data_in_code import scan_tree
from .env import environment_for
from .evidence import freeze
from .io import Walk, atomic_write_json, atomic_write_text, copy_tree, digest_of, remove_tree, sha256_bytes, tree_hashes
from .paths import ENTRY, TrialPaths
from .sandbox import Limits, Mount, SandboxResult, SandboxSpec, get_sandbox
from .sandbox.base import sandbox_env
from .sandbox.volume import Volume
from .task import Task
from .task.secret_inputs import draw_inputs, published_inputs
from .version import __version__

log = logging.getLogger(__name__)

WORKDIR = "/home/submission"
class Provenance(BaseModel):
    """replay/provenance.json"""

    task: str
    task_digest: str | None = None  # the task package's content hash at replay time (which task this is)
    status: Literal["succeeded", "failed"]
    failure_reasons: list[str] = Field(default_factory=list)
    exit_code: int | None
    signal: int | None = None
    wall_sec: float
    timed_out: bool
    started_at: str
    finished_at: str
    command: list[str]
    limits: dict
    network: str
    sandbox: dict
    environment: dict
    removed_outputs: dict[str, int]
    source_hashes_before: dict[str, str]
    source_hashes_after: dict[str, str]
    sources_changed: list[str]
    sources_digest: str
    stray_files: list[str] = Field(default_factory=list)
    limit_exceeded: str | None = None  # why a limit stopped the replay (storage, files, memory)
    limit: str | None = None  # which: memory | storage | files | time
    peak_memory_mb: float | None = None  # resident peak of the whole replay (where a cgroup measured it)
    oom_killed: bool = False
    limit_mechanisms: dict[str, str] = Field(default_factory=dict)  # what enforced each limit (cgroup, rlimit, ...)
    hard_links_skipped: list[str] = Field(default_factory=list)  # submission files linked to outside files
    quarantined: list[str] = Field(default_factory=list)  # delivered files that are not sources: removed first
    # entries that are not frozen: special files, trees nested too deep or with too long paths ("path: why")
    refused_entries: list[str] = Field(default_factory=list)
    log_bytes_dropped: dict[str, int] = Field(default_factory=dict)  # output beyond the log cap
    leftover_processes_killed: int = 0
    queued_sec: float = 0.0
    cores: list[int] = Field(default_factory=list)
    logs: dict[str, str]
    evidence_manifest_digest: str
    receipts_digest: str | None = None  # of replay/receipts.json (what ran, recorded from outside)
    receipts_complete: bool = False
    # the second replay, with inputs drawn for it alone (secret/ in the evidence); None: the task varies none,
    # or the first replay failed
    secret_replay: dict | None = None
    # large high-entropy literals in the delivered sources (data shipped as code; workbench.data_in_code)
    data_in_code: dict | None = None
    workbench_version: str = __version__


def _now() -> str:
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


def _stage_evidence(delivered: Path, work: Path, outputs: list[str], dest: Path,
                    skip: set[str] = frozenset()) -> list[str]:
    """Sources as delivered (never the replay's copy) plus the output roots the replay regenerated;
    returns what was refused (special files, trees nested too deep), relative to the submission."""
    refused: list[str] = []
    if delivered.is_dir():
        refused += copy_tree(delivered, dest, skip_top=outputs, skip=skip, metadata=False).refused
    else:
        dest.mkdir()
    return refused + _copy_outputs(work, outputs, dest)


def _copy_outputs(work: Path, outputs: list[str], dest: Path) -> list[str]:
    """The output roots a replay regenerated, copied under ``dest``; returns what was refused."""
    refused: list[str] = []
    for root in outputs:
        src = work / root
        if src.is_dir() and not src.is_symlink():
            refused += [f"{root}/{r}" for r in copy_tree(src, dest / root, dirs_exist_ok=True).refused]
    return refused


def _inodes(work: Path) -> dict[int, list[str]]:
    """The package's files after the replay by inode (evidence-relative paths): the receipts name files by
    the inode the kernel reported, never by a path a process gave."""
    out: dict[int, list[str]] = {}
    for e in Walk(work):
        if e.is_file:
            out.setdefault(e.st.st_ino, []).append("submission/" + e.rel)
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
    )


@dataclass
class _Run:
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


def _run_package(task: Task, submission: Path, box, env: dict, image, limits: Limits, vol_dir: Path,
                 stdout: Path, stderr: Path, *, inputs: bytes | None, record: bool) -> _Run:
    """Copy the package into a fresh volume, wipe its output roots and what is not a source, write the task's
    input file (``inputs``), and run ``bash reproduce.sh`` in the sandbox. The caller releases the volume,
    unless this raises (an interrupt, a sandbox that cannot start): then it is released here, so a rerun
    finds no mounted volume in its way."""
    volume = Volume.create(vol_dir, limits.max_storage_mb, limits.max_files)
    try:
        return _run_in(volume, task, submission, box, env, image, limits, vol_dir, stdout, stderr,
                       inputs=inputs, record=record)
    except BaseException:
        volume.release()
        raise


def _run_in(volume: Volume, task: Task, submission: Path, box, env: dict, image, limits: Limits, vol_dir: Path,
            stdout: Path, stderr: Path, *, inputs: bytes | None, record: bool) -> _Run:
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
        _write_input(work, task.config.replay.secret_inputs.path, inputs)
    before = tree_hashes(work, exclude_top=outputs)
    box.prepare(vol_dir)

    mounts = [Mount(work, WORKDIR, writable=True, volume=volume)]
    if env["dir"]:
        mounts.append(Mount(Path(env["dir"]), env["dir"], writable=False))
    spec = SandboxSpec(mounts=mounts, workdir=WORKDIR, limits=limits, image=image,
                       env=sandbox_env(env["dir"], limits.cpus, keep_path=image is not None), network="none",
                       record=record)
    started = _now()
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
    finished = _now()

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
    return _Run(result=result, reasons=reasons, work=work, volume=volume, removed=removed, quarantined=quarantined,
                skipped_links=skipped_links, refused=refused, before=before, after=after, changed=changed,
                stray=stray, flood=flood, started=started, finished=finished)


def _write_input(root: Path, rel: str, data: bytes) -> None:
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


def _stage_secret(run: _Run, inputs: bytes, rel: str, outputs: list[str], stdout: Path, stderr: Path,
                  dest: Path) -> dict[str, Any]:
    """The secret replay's part of the evidence (``secret/``): its output roots, logs, input and outcome."""
    (dest / "submission").mkdir(parents=True)
    refused = [] if run.flood else _copy_outputs(run.work, outputs, dest / "submission")
    rep = dest / "replay"
    _write_input(rep / "input", rel, inputs)
    shutil.copy2(stdout, rep / "stdout.log")
    shutil.copy2(stderr, rep / "stderr.log")
    outcome = {"status": "failed" if run.reasons else "succeeded", "failure_reasons": run.reasons,
               "exit_code": run.result.exit_code, "wall_sec": round(run.result.wall_sec, 3),
               "timed_out": run.result.timed_out, "inputs_sha256": sha256_bytes(inputs),
               "refused_entries": sorted(set(refused))[:100]}
    atomic_write_json(rep / "outcome.json", outcome)
    return outcome


def replay(task: Task, submission: Path, trial_dir: Path, *, timeout: float | None = None,
           sandbox: str = "bwrap") -> Provenance:
    """Stage 2: replay ``submission`` for ``task`` from scratch in a clean sandbox with no network, and freeze
    what it regenerated as read-only evidence (``trial_dir``'s replay/ and evidence/).

    A task that varies inputs (``[metadata.replay.secret_inputs]``) gets a second clean replay, with values
    drawn for it alone, when the first succeeded; both are frozen in one evidence tree (``secret/``).

    Args:
        task: the task.
        submission: the package to replay (its ``reproduce.sh``).
        trial_dir: the trial directory to write into.
        timeout: the replay's time limit in seconds (None: the task's).
        sandbox: ``bwrap`` or ``docker``.

    Returns:
        The :class:`Provenance` written to replay/provenance.json: the status, exit code, what ran, the
        evidence manifest's digest.
    """
    tp = TrialPaths(Path(trial_dir).resolve())
    submission = Path(submission).resolve()
    box = get_sandbox(sandbox)
    env, image = environment_for(task, box.name, getattr(box, "client", None))
    limits = limits_for(task, timeout)
    outputs = task.config.replay.outputs
    varied = task.config.replay.secret_inputs
    published = published_inputs(task)
    tp.replay.mkdir(parents=True, exist_ok=True)

    scratch = os.environ.get("WORKBENCH_SCRATCH") or None
    staging = Path(tempfile.mkdtemp(prefix="workbench-replay-", dir=scratch))
    os.chmod(staging, 0o711)
    runs: list[_Run] = []
    try:
        run = _run_package(task, submission, box, env, image, limits, staging / "vol", tp.stdout_log,
                           tp.stderr_log, inputs=published, record=True)
        runs.append(run)
        reasons, result = run.reasons, run.result
        ev_stage = staging / "evidence"
        ev_stage.mkdir()
        refused = run.refused + _stage_evidence(submission, run.work, [] if run.flood else outputs,
                                                ev_stage / "submission", skip=set(run.quarantined))
        (ev_stage / "replay").mkdir()
        shutil.copy2(tp.stdout_log, ev_stage / "replay" / "stdout.log")
        shutil.copy2(tp.stderr_log, ev_stage / "replay" / "stderr.log")
        if published is not None:
            _write_input(ev_stage / "replay" / "input", varied.path, published)
        if result.record is not None:
            rec = receipts.build(result.record, inodes=_inodes(run.work), env_dir=env["dir"], image=image is not None)
        else:
            rec = receipts.unavailable(result.record_unavailable or "nothing was run")
        in_code = scan_tree(run.work, only=run.before)  # the sources as the replay ran them, before release
        run.volume.release()

        secret = None
        if varied is not None and not reasons:
            drawn = draw_inputs(task)
            tp.secret_replay.mkdir(exist_ok=True)
            s_limits = dataclasses.replace(limits, timeout_sec=float(varied.timeout_sec or limits.timeout_sec))
            srun = _run_package(task, submission, box, env, image, s_limits, staging / "vol-secret",
                                tp.secret_replay / "stdout.log", tp.secret_replay / "stderr.log",
                                inputs=drawn, record=False)
            runs.append(srun)
            secret = _stage_secret(srun, drawn, varied.path, outputs, tp.secret_replay / "stdout.log",
                                   tp.secret_replay / "stderr.log", ev_stage / "secret")
            srun.volume.release()
        manifest_digest, _ = freeze(ev_stage, tp.evidence)
        # compact (tens of thousands of processes stay a few megabytes); ASCII: names that are not UTF-8 survive
        receipts_text = json.dumps({"schema_version": rec.schema_version, **rec.model_dump(exclude_defaults=True)},
                                   separators=(",", ":"))
        atomic_write_text(tp.receipts, receipts_text)

        prov = Provenance(
            task=task.id, task_digest=task.content_hash(),
            status="failed" if reasons else "succeeded",
            failure_reasons=reasons,
            exit_code=result.exit_code,
            signal=result.signal,
            wall_sec=round(result.wall_sec, 3),
            timed_out=result.timed_out,
            started_at=run.started,
            finished_at=run.finished,
            command=["bash", ENTRY],
            limits=limits.as_dict(),
            network="none",
            sandbox=box.describe(),
            environment={k: env[k] for k in ("dir", "kind", "digest", "image") if k in env},
            removed_outputs=run.removed,
            source_hashes_before=run.before,
            source_hashes_after=run.after,
            sources_changed=run.changed,
            sources_digest=digest_of(run.before),
            stray_files=run.stray[:1000],
            leftover_processes_killed=result.leftover_processes_killed,
            limit_exceeded=result.limit_exceeded,
            limit=result.limit,
            peak_memory_mb=result.peak_memory_mb,
            oom_killed=result.oom_killed,
            limit_mechanisms={**result.mechanisms, "storage": run.volume.describe()["kind"]},
            hard_links_skipped=run.skipped_links,
            quarantined=sorted(run.quarantined)[:1000],
            refused_entries=sorted(set(refused))[:1000],
            log_bytes_dropped=result.log_bytes_dropped,
            queued_sec=result.queued_sec,
            cores=result.cores,
            logs={"stdout": "replay/stdout.log", "stderr": "replay/stderr.log"},
            evidence_manifest_digest=manifest_digest,
            receipts_digest=sha256_bytes(receipts_text.encode()),
            receipts_complete=rec.complete,
            secret_replay=secret,
            data_in_code=in_code,
        )
        atomic_write_json(tp.provenance, prov.model_dump())
        return prov
    finally:
        for r in runs:
            r.volume.release()
        remove_tree(staging)
