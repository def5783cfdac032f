"""The confined reader: everything that parses a submission's evidence runs here, in a sandbox.

Deterministic checks (the built-in kinds and the task's ``tests/checks.py``), the judge's evidence
tools and the reviewer's previews parse files the submission wrote, with parsers (pandas, numpy, json)
a hostile file can exhaust (a 1 MB ``.npz`` that decompresses to gigabytes). So they run in a sandbox of
the replay's kind, never in the workbench: the sealed evidence read-only at ``/evidence``, only the
private files that component needs (``tests/checks.py`` and ``tests/refs/`` for checks, nothing for the
judge's tools or previews), the scoring runtime (:mod:`.runtime`) read-only, no network, and the task's
memory limit, a time limit, a process limit and a bounded output. Results come back as JSON lines.

Whose fault a failure is: the reader reports each check as it starts and as it ends, so when a limit
(memory, time, output) or a crash kills it mid-check, that check is the submission's failure (its files
did it: 0, with the limit named) and the rest run in a fresh reader. A reader that cannot start, or a
``tests/checks.py`` that does not import, is the workbench's or the task's fault: an error, withheld.
:func:`run_confined` is the same confinement for other programs (the hidden evaluator).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import WorkbenchError
from ..io import remove_tree
from ..sandbox import Limits, Mount, SandboxResult, SandboxSpec, get_sandbox
from ..sandbox.volume import HostBind

log = logging.getLogger(__name__)

EVIDENCE = "/evidence"
TESTS = "/task/tests"
REQUEST = "/request/request.json"
MODULE = "workbench.reader"  # its __main__
OUTPUT_MB = 32


class ReaderFailed(WorkbenchError):
    """The confined reader could not run (the sandbox, the runtime or the task's code failed): withheld."""


@dataclass
class Confined:
    """What a confined program left: its sandbox result, its stdout (bounded) and the tail of its stderr."""

    result: SandboxResult
    stdout: bytes
    stderr: str

    @property
    def killed_by(self) -> str | None:
        """The limit that stopped it, in words, or None."""
        r = self.result
        if r.limit_exceeded:
            return r.limit_exceeded
        if r.timed_out:
            return "the time limit"
        if r.signal:
            return f"signal {r.signal}"
        if r.log_bytes_dropped.get("stdout"):
            return f"the output limit ({OUTPUT_MB} MB)"
        return None


# what readers use of the provenance: the replay's outcome (the replay_succeeded check) and, for previews,
# which of the previewed files are verified sources
PROVENANCE_FIELDS = ("task", "status", "exit_code", "signal", "timed_out", "limit", "wall_sec", "network")
MAX_REASONS, MAX_REASON_CHARS = 20, 2000


def for_reader(provenance: dict, refs: list[str] = ()) -> dict:
    """The part of the provenance a reader gets, bounded whatever the submission made of it: a package of
    tens of thousands of long-named sources makes the provenance tens of megabytes, which must not keep a
    reader of the task's memory from starting (a withheld trial the submission chose)."""
    out = {k: provenance[k] for k in PROVENANCE_FIELDS if k in provenance}
    reasons = provenance.get("failure_reasons") or []
    out["failure_reasons"] = [str(r)[:MAX_REASON_CHARS] for r in reasons[:MAX_REASONS]]
    sources = provenance.get("source_hashes_before") or {}
    inner = [r.removeprefix("submission/") for r in refs]
    out["source_hashes_before"] = {r: sources[r] for r in inner if r in sources}
    return out


def reader_limits(memory_mb: int, timeout_sec: float) -> Limits:
    return Limits(timeout_sec=timeout_sec, memory_mb=memory_mb, cpus=1, max_processes=64, max_open_files=256,
                  max_file_mb=64, max_storage_mb=min(256, memory_mb), max_files=2_000, max_log_mb=OUTPUT_MB)


def run_confined(argv: list[str], *, binds: dict[str, Path], limits: Limits, workdir: str = "/tmp",
                 files: dict[str, bytes] | None = None, env: dict[str, str] | None = None,
                 readonly_same_path: tuple[Path, ...] = ()) -> Confined:
    """Run ``argv`` in a bwrap sandbox with ``binds`` ({sandbox path: host path}) read-only, ``files``
    ({sandbox path: bytes}) read-only, ``readonly_same_path`` (runtimes, environments) read-only at their
    own paths, no network and ``limits``."""
    staging = Path(tempfile.mkdtemp(prefix="workbench-reader-", dir=os.environ.get("WORKBENCH_SCRATCH") or None))
    os.chmod(staging, 0o711)
    held: list[HostBind] = []
    try:
        mounts = [Mount(Path(p), str(p)) for p in readonly_same_path]
        for i, (inside, host) in enumerate(binds.items()):
            b = HostBind(host, staging / "mnt" / str(i)).__enter__()
            held.append(b)
            mounts.append(Mount(b.path, inside))
        for i, (inside, data) in enumerate((files or {}).items()):
            path = staging / "files" / str(i)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(path.parent, 0o755)
            path.write_bytes(data)
            os.chmod(path, 0o644)
            mounts.append(Mount(path, inside))
        spec = SandboxSpec(mounts=mounts, workdir=workdir, limits=limits, network="none",
                           env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp",
                                "MPLCONFIGDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1",
                                "OPENBLAS_NUM_THREADS": "1", **(env or {})})
        out, err = staging / "stdout", staging / "stderr"
        result = get_sandbox("bwrap").run(argv, spec, out, err)
        stdout = out.read_bytes() if out.is_file() else b""
        stderr = err.read_text(errors="replace")[-4000:] if err.is_file() else ""
        return Confined(result, stdout, stderr)
    finally:
        for b in reversed(held):
            b.__exit__()
        remove_tree(staging)


@dataclass
class Reader:
    """Confined reads of one trial's evidence (see the module's docstring)."""

    evidence: Path
    provenance: dict
    memory_mb: int = 2048
    timeout_sec: float = 600.0
    tests: Path | None = None  # the task's tests/ (checks.py and refs/), mounted for checks only
    receipts: dict | None = None  # the replay's receipts, for the receipt check kinds

    def _run(self, request: dict[str, Any], *, with_tests: bool, timeout: float) -> tuple[list[dict], Confined]:
        from .runtime import ensure_runtime

        rt = ensure_runtime()
        binds = {EVIDENCE: Path(self.evidence).resolve()}
        if with_tests and self.tests is not None:
            for name in ("checks.py", "refs"):
                if (self.tests / name).exists():
                    binds[f"{TESTS}/{name}"] = (self.tests / name).resolve()
        done = run_confined(rt.argv(MODULE, REQUEST), binds=binds, files={REQUEST: json.dumps(request).encode()},
                            limits=reader_limits(self.memory_mb, timeout), readonly_same_path=(rt.env, rt.src))
        lines = []
        for raw in done.stdout.splitlines():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                continue  # a line cut by the output limit
        if not any(line.get("ready") for line in lines):
            failed = next((line for line in lines if "ready" in line), None)
            why = failed["error"] if failed else (done.killed_by or done.stderr.strip()[-600:] or "no output")
            raise ReaderFailed(f"the confined evidence reader did not start: {why}")
        return lines, done

    def checks(self, leaves: list[tuple[str, dict]], task_checks: bool) -> dict[str, dict[str, Any]]:
        """{leaf id: outcome} for deterministic leaves ``(id, check spec)``. An outcome is ``{"score",
        "rationale", "refs"}``, ``{"missing": why}`` or ``{"error": why, "code_fault": bool}``."""
        out: dict[str, dict[str, Any]] = {}
        todo = list(leaves)
        deadline = time.monotonic() + self.timeout_sec
        while todo:
            left = max(5.0, deadline - time.monotonic())
            request = {"op": "checks", "evidence": EVIDENCE, "provenance": for_reader(self.provenance),
                       "receipts": self.receipts, "checks_py": f"{TESTS}/checks.py" if task_checks else None,
                       "leaves": [{"id": i, "check": c} for i, c in todo]}
            lines, done = self._run(request, with_tests=task_checks, timeout=left)
            for line in lines:
                if "leaf" in line:
                    out[line["leaf"]] = line["outcome"]
            started = [line["start"] for line in lines if "start" in line]
            culprit = next((i for i in started if i not in out), None)
            if culprit is None:
                missing = [i for i, _ in todo if i not in out]
                if missing:  # exited early without a culprit: the runtime, not the evidence
                    raise ReaderFailed(f"the confined reader stopped before {missing[0]}: "
                                       f"{done.killed_by or done.stderr.strip()[-600:]}")
                break
            why = done.killed_by or f"exit code {done.result.exit_code}"
            out[culprit] = {"error": f"reading the submission's outputs hit {why}"
                                     + (f" (peak {done.result.peak_memory_mb} MB)" if done.result.oom_killed else ""),
                            "code_fault": False, "limit": done.result.limit}
            todo = [(i, c) for i, c in todo if i not in out]
        return out

    def tools(self, calls: list[tuple[str, dict]], limit: int) -> list[str]:
        """The judge's read-only tool calls ``(name, args)``, answered in order."""
        if not calls:
            return []
        request = {"op": "tools", "evidence": EVIDENCE, "provenance": for_reader(self.provenance), "limit": limit,
                   "calls": [{"name": n, "args": a} for n, a in calls]}
        lines, done = self._run(request, with_tests=False, timeout=min(self.timeout_sec, 120.0))
        answers = {line["tool"]: line["text"] for line in lines if "tool" in line}
        why = done.killed_by or "the reader stopped"
        return [answers.get(i, f"error: reading the evidence hit {why}") for i in range(len(calls))]

    def previews(self, refs: list[str], hashes: dict[str, str]) -> str:
        """HTML previews of a leaf's evidence (see :mod:`workbench.review.previews`)."""
        request = {"op": "previews", "evidence": EVIDENCE, "provenance": for_reader(self.provenance, refs),
                   "refs": refs, "hashes": hashes}
        try:
            lines, done = self._run(request, with_tests=False, timeout=min(self.timeout_sec, 60.0))
        except ReaderFailed as exc:
            return f"<div style='color:#b00'>previews unavailable: {exc}</div>"
        html = [line["html"] for line in lines if "html" in line]
        if len(html) < len(refs) and done.killed_by:
            html.append(f"<div style='color:#b00'>preview stopped: reading the evidence hit {done.killed_by}</div>")
        return "".join(html)
