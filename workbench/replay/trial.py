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
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import receipts
from ..evidence import freeze, partial
from ..io import Walk, atomic_write_json, atomic_write_text, copy_tree, digest_of, remove_tree, sha256_bytes
from ..paths import ENTRY, TrialPaths
from ..sandbox import get_sandbox, host
from ..sandbox.environments import environment_for
from ..task import Task
from ..task.secret_inputs import draw_inputs, published_inputs
from .data_in_code import scan_tree
from .package import PackageRun, Setting, limits_for, run_package, write_input
from .provenance import Provenance


def _stage_evidence(delivered: Path, work: Path, outputs: list[str], dest: Path, hashes: dict[str, str],
                    prefix: str, skip: set[str] = frozenset()) -> list[str]:
    """Sources as delivered (never the replay's copy) plus the output roots the replay regenerated;
    returns what was refused (special files, trees nested too deep), relative to the submission."""
    refused: list[str] = []
    if delivered.is_dir():
        refused += copy_tree(delivered, dest, skip_top=outputs, skip=skip, metadata=False).refused
    else:
        dest.mkdir()
    return refused + _copy_outputs(work, outputs, dest, hashes, prefix)


def _copy_outputs(work: Path, outputs: list[str], dest: Path, hashes: dict[str, str], prefix: str) -> list[str]:
    """The output roots a replay regenerated, copied under ``dest`` and hashed as they are copied (into
    ``hashes``, by evidence-relative path: ``prefix`` + the path under ``dest``); returns what was refused."""
    refused: list[str] = []
    for root in outputs:
        src = work / root
        if src.is_dir() and not src.is_symlink():
            got: dict[str, str] = {}
            refused += [f"{root}/{r}" for r in copy_tree(src, dest / root, dirs_exist_ok=True, hashes=got).refused]
            hashes.update({f"{prefix}{root}/{rel}": digest for rel, digest in got.items()})
    return refused


def _inodes(work: Path) -> tuple[dict[int, list[str]], dict[int, int]]:
    """The package's files after the replay by inode (evidence-relative paths), and each inode's generation:
    the receipts name files by the inode the kernel reported, never by a path a process gave, and an inode
    freed and handed to a new file is told apart by its generation."""
    out: dict[int, list[str]] = {}
    gens: dict[int, int] = {}
    for e in Walk(work):
        if e.is_file:
            out.setdefault(e.st.st_ino, []).append("submission/" + e.rel)
            if (g := receipts.generation(e.path, e.st)) is not None:
                gens[e.st.st_ino] = g
    return out, gens


def _stage_secret(run: PackageRun, inputs: bytes, rel: str, outputs: list[str], stdout: Path, stderr: Path,
                  dest: Path, hashes: dict[str, str]) -> dict[str, Any]:
    """The secret replay's part of the evidence (``secret/``): its output roots, logs, input and outcome."""
    (dest / "submission").mkdir(parents=True)
    refused = [] if run.flood else _copy_outputs(run.work, outputs, dest / "submission", hashes,
                                                 "secret/submission/")
    rep = dest / "replay"
    write_input(rep / "input", rel, inputs)
    shutil.copy2(stdout, rep / "stdout.log")
    shutil.copy2(stderr, rep / "stderr.log")
    outcome = {"status": "failed" if run.reasons else "succeeded", "failure_reasons": run.reasons,
               "exit_code": run.result.exit_code, "wall_sec": round(run.result.wall_sec, 3),
               "timed_out": run.result.timed_out, "inputs_sha256": sha256_bytes(inputs),
               "refused_entries": sorted(set(refused))[:100]}
    atomic_write_json(rep / "outcome.json", outcome)
    return outcome


def replay_trial(task: Task, submission: Path, trial_dir: Path, *, timeout: float | None = None,
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
        The :class:`~.provenance.Provenance` written to replay/provenance.json: the status, exit code, what
        ran, the evidence manifest's digest.
    """
    tp = TrialPaths(Path(trial_dir).resolve())
    setting = _setting(task, Path(submission).resolve(), sandbox, timeout, holder=f"the replay of {tp.root.name}")
    tp.replay.mkdir(parents=True, exist_ok=True)
    scratch = os.environ.get("WORKBENCH_SCRATCH") or None
    staging = Path(tempfile.mkdtemp(prefix="workbench-replay-", dir=scratch))
    os.chmod(staging, 0o711)
    runs: list[PackageRun] = []
    try:
        published = published_inputs(task)
        run = run_package(setting, setting.limits, staging / "vol", tp.stdout_log, tp.stderr_log,
                          inputs=published, record=True)
        runs.append(run)
        # staged where it is sealed (evidence.partial beside evidence/): the outputs are copied once
        staged = _stage_first(setting, run, published, tp, partial(tp.evidence))
        run.volume.release()
        secret = None
        if task.config.replay.secret_inputs is not None and not run.reasons:
            secret = _replay_secret(setting, tp, staging, runs, staged.root / "secret", staged.hashes)
        manifest_digest, _ = freeze(staged.root, tp.evidence, in_place=True, known=staged.hashes)
        receipts_digest = _write_receipts(tp, staged.receipts)
        prov = _provenance(setting, run, staged, secret, manifest_digest, receipts_digest)
        atomic_write_json(tp.provenance, prov.model_dump())
        return prov
    finally:
        for r in runs:
            r.volume.release()
        remove_tree(staging)
        remove_tree(partial(tp.evidence))  # what a failure left half staged


def _setting(task: Task, submission: Path, sandbox: str, timeout: float | None, holder: str) -> Setting:
    """The sandbox backend, the task's environment (and image) and the limits every run of the package gets;
    a host without the cores, memory, storage or GPUs the task needs is refused here, before any work."""
    host.require(task)
    box = get_sandbox(sandbox)
    environment, image = environment_for(task, box.name, getattr(box, "client", None))
    return Setting(task=task, submission=submission, box=box, environment=environment, image=image,
                   limits=limits_for(task, timeout), holder=holder)


@dataclass
class _Staged:
    """The first replay's part of the evidence, staged for freezing, and what was learnt while staging it."""

    root: Path
    refused: list[str]
    receipts: receipts.Receipts
    data_in_code: dict
    hashes: dict[str, str]  # evidence-relative path -> sha256, of the outputs, taken as they were copied


def _stage_first(setting: Setting, run: PackageRun, published: bytes | None, tp: TrialPaths, root: Path) -> _Staged:
    """Stage the first replay's evidence (sources as delivered, regenerated outputs, logs, the input it was
    given), make its receipts from what the recorder saw, and scan the sources as the replay ran them for
    data hidden in code: all before the volume is released."""
    task = setting.task
    outputs = task.config.replay.outputs
    remove_tree(root)
    root.mkdir()
    hashes: dict[str, str] = {}
    refused = run.refused + _stage_evidence(setting.submission, run.work, [] if run.flood else outputs,
                                            root / "submission", hashes, "submission/", skip=set(run.quarantined))
    (root / "replay").mkdir()
    shutil.copy2(tp.stdout_log, root / "replay" / "stdout.log")
    shutil.copy2(tp.stderr_log, root / "replay" / "stderr.log")
    if published is not None:
        write_input(root / "replay" / "input", task.config.replay.secret_inputs.path, published)
    result = run.result
    if result.record is not None:
        inodes, gens = _inodes(run.work)
        rec = receipts.build(result.record, inodes=inodes, generations=gens, env_dir=setting.environment["dir"],
                             image=setting.image is not None)
    else:
        rec = receipts.unavailable(result.record_unavailable or "nothing was run")
    return _Staged(root=root, refused=refused, receipts=rec, data_in_code=scan_tree(run.work, only=run.before),
                   hashes=hashes)


def _replay_secret(setting: Setting, tp: TrialPaths, staging: Path, runs: list[PackageRun], dest: Path,
                   hashes: dict[str, str]) -> dict[str, Any]:
    """The second clean replay, with inputs drawn for it alone, staged under the evidence's ``secret/``
    (``dest``); its volume is made under ``staging``."""
    task = setting.task
    varied = task.config.replay.secret_inputs
    drawn = draw_inputs(task)
    tp.secret_replay.mkdir(exist_ok=True)
    limits = dataclasses.replace(setting.limits, timeout_sec=float(varied.timeout_sec or setting.limits.timeout_sec))
    stdout, stderr = tp.secret_replay / "stdout.log", tp.secret_replay / "stderr.log"
    run = run_package(setting, limits, staging / "vol-secret", stdout, stderr, inputs=drawn, record=False)
    runs.append(run)
    secret = _stage_secret(run, drawn, varied.path, task.config.replay.outputs, stdout, stderr, dest, hashes)
    run.volume.release()
    return secret


def _write_receipts(tp: TrialPaths, rec: receipts.Receipts) -> str:
    """replay/receipts.json, compact (tens of thousands of processes stay a few megabytes) and ASCII (names
    that are not UTF-8 survive); returns its digest, which the provenance attests."""
    text = json.dumps({"schema_version": rec.schema_version, **rec.model_dump(exclude_defaults=True)},
                      separators=(",", ":"))
    atomic_write_text(tp.receipts, text)
    return sha256_bytes(text.encode())


def _provenance(setting: Setting, run: PackageRun, staged: _Staged, secret: dict | None, manifest_digest: str,
                receipts_digest: str) -> Provenance:
    """What the first replay ran, under which limits, what it changed and what was frozen."""
    task, result, environment = setting.task, run.result, setting.environment
    return Provenance(
        task=task.id, task_digest=task.content_hash(),
        status="failed" if run.reasons else "succeeded",
        failure_reasons=run.reasons,
        exit_code=result.exit_code,
        signal=result.signal,
        wall_sec=round(result.wall_sec, 3),
        timed_out=result.timed_out,
        started_at=run.started,
        finished_at=run.finished,
        command=["bash", ENTRY],
        limits=setting.limits.as_dict(),
        network="none",
        sandbox=setting.box.describe(),
        environment={k: environment[k] for k in ("dir", "kind", "digest", "image") if k in environment},
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
        refused_entries=sorted(set(staged.refused))[:1000],
        log_bytes_dropped=result.log_bytes_dropped,
        queued_sec=result.queued_sec,
        cores=result.cores,
        gpus=result.gpus,
        logs={"stdout": "replay/stdout.log", "stderr": "replay/stderr.log"},
        evidence_manifest_digest=manifest_digest,
        receipts_digest=receipts_digest,
        receipts_complete=staged.receipts.complete,
        secret_replay=secret,
        data_in_code=staged.data_in_code,
    )
