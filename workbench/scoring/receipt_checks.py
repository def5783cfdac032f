"""Check kinds on execution receipts (:mod:`workbench.receipts`): did the domain software really run?

A rubric can ask that a number was earned by running the science, not typed in:

* ``ran``: ``program`` (from the system or the task's environment, e.g. ``pw.x``) ran ``min_runs``
  times, each for at least ``min_cpu_sec`` CPU seconds;
* ``loaded``: some process loaded a Python package or shared library (``pyscf``, ``libmeep``, ``mujoco``),
  with at least ``min_cpu_sec`` CPU seconds in that process;
* ``written_by``: every file matching ``path`` got its frozen content from a process that is ``program``
  or loaded ``package`` (a copy, a ``cat`` or a rename over it is not), and at least ``min_files`` match;
* ``cpu_seconds``: the replay's CPU seconds (all processes, user + system) are within ``min``/``max``;
* ``distinct``: the files matching ``paths`` all differ (band files at different resolutions).

Receipts the recorder could not make complete fail these checks (the submission could otherwise hide
its work); receipts that were not recorded at all (no recorder on this host) withhold them.
"""

from __future__ import annotations

import fnmatch

from pydantic import Field, model_validator

from ..evidence import Evidence, MissingEvidence, normalize, read_manifest
from ..receipts import UNAVAILABLE, ProcessReceipt, Receipts
from .checks import CHECK_KINDS, CheckKind, CheckOutcome, _outcome, _Params
from .faults import InfrastructureFault


def receipts_of(ev: Evidence) -> Receipts:
    """The trial's receipts, complete, or a reason to fail (or withhold) the check."""
    data = getattr(ev, "receipts", None)
    if data is None:
        raise InfrastructureFault("no receipts were given to the check")
    r = data if isinstance(data, Receipts) else Receipts.model_validate(data)
    if not r.complete:
        why = "; ".join(r.problems[:3]) or "incomplete"
        if any(p.startswith(UNAVAILABLE) for p in r.problems):
            raise InfrastructureFault(f"the replay's receipts were not recorded ({why})")
        raise ReceiptsIncomplete(why)
    return r


class ReceiptsIncomplete(Exception):
    """The recorder saw the replay only in part (e.g. a flood made the kernel drop events)."""


def _cpu(procs: list[ProcessReceipt]) -> str:
    return f"{sum(p.cpu_sec for p in procs):.2f} CPU s"


class Ran(_Params):
    program: str = Field(min_length=1)
    min_cpu_sec: float = Field(default=0.0, ge=0)
    min_runs: int = Field(default=1, ge=1)


def ran(ev: Evidence, p: Ran) -> CheckOutcome:
    runs = receipts_of(ev).runs_of(p.program)
    good = [r for r in runs if r.cpu_sec >= p.min_cpu_sec]
    ok = len(good) >= p.min_runs
    return _outcome(ok, f"{p.program} ran {len(runs)} time(s), {len(good)} with >= {p.min_cpu_sec:g} CPU s "
                        f"({_cpu(runs)} in all; need {p.min_runs})", ["replay/receipts.json"])


class Loaded(_Params):
    package: str = Field(min_length=1)
    min_cpu_sec: float = Field(default=0.0, ge=0)


def loaded(ev: Evidence, p: Loaded) -> CheckOutcome:
    procs = receipts_of(ev).loaders_of(p.package)
    good = [r for r in procs if r.cpu_sec >= p.min_cpu_sec]
    names = ", ".join(sorted({r.program.rsplit("/", 1)[-1] for r in procs})) or "no process"
    return _outcome(bool(good), f"{p.package} loaded by {names} ({_cpu(procs)}; need a process with "
                                f">= {p.min_cpu_sec:g} CPU s)", ["replay/receipts.json"])


class WrittenBy(_Params):
    path: str
    program: str | None = None
    package: str | None = None
    min_files: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _one(self):
        if (self.program is None) == (self.package is None):
            raise ValueError("give exactly one of program or package")
        return self


def written_by(ev: Evidence, p: WrittenBy) -> CheckOutcome:
    r = receipts_of(ev)
    pattern = normalize(p.path)
    frozen = {k: v for k, v in read_manifest(ev.root).items() if fnmatch.fnmatchcase(k, pattern)}
    if not frozen:
        raise MissingEvidence(pattern, "no file matches")
    trusted = {x.pid for x in (r.runs_of(p.program) if p.program else r.loaders_of(p.package))}
    who = p.program or p.package
    bad = []
    for rel, digest in sorted(frozen.items()):
        writers = r.writers_of(rel, digest)
        if not writers:
            bad.append(f"{rel}: no recorded process wrote this content")
        elif any(w.pid not in trusted for w in writers):
            names = ", ".join(sorted({w.program.rsplit("/", 1)[-1] for w in writers if w.pid not in trusted}))
            bad.append(f"{rel}: written by {names}, not {who}")
    ok = not bad and len(frozen) >= p.min_files
    text = (f"{len(frozen)} file(s) match {p.path}, all written by {who}" if not bad
            else f"{len(bad)} of {len(frozen)} file(s) not written by {who}: " + "; ".join(bad[:4]))
    if not bad and len(frozen) < p.min_files:
        text += f" (need {p.min_files})"
    return _outcome(ok, text, [*sorted(frozen), "replay/receipts.json"])


class CpuSeconds(_Params):
    min: float | None = Field(default=None, ge=0)
    max: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bound(self):
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both")
        return self


def cpu_seconds(ev: Evidence, p: CpuSeconds) -> CheckOutcome:
    total = receipts_of(ev).total_cpu_sec
    ok = (p.min is None or total >= p.min) and (p.max is None or total <= p.max)
    bounds = " and ".join(x for x in (f">= {p.min:g}" if p.min is not None else "",
                                      f"<= {p.max:g}" if p.max is not None else "") if x)
    return _outcome(ok, f"the replay used {total:.2f} CPU s (need {bounds})", ["replay/receipts.json"])


class Distinct(_Params):
    paths: list[str] = Field(min_length=1)
    min_files: int = Field(default=2, ge=2)


def distinct(ev: Evidence, p: Distinct) -> CheckOutcome:
    manifest = read_manifest(ev.root)
    picked = {k: v for k, v in manifest.items() if any(fnmatch.fnmatchcase(k, normalize(g)) for g in p.paths)}
    if not picked:
        raise MissingEvidence(normalize(p.paths[0]), "no file matches")
    groups: dict[str, list[str]] = {}
    for k, v in picked.items():
        groups.setdefault(v, []).append(k)
    same = [g for g in groups.values() if len(g) > 1]
    ok = not same and len(picked) >= p.min_files
    text = (f"{len(picked)} file(s), all different" if not same else
            "identical contents: " + "; ".join(" = ".join(sorted(g)) for g in same[:3]))
    return _outcome(ok, text + ("" if len(picked) >= p.min_files else f" (need {p.min_files})"), sorted(picked))


CHECK_KINDS.update({
    "ran": CheckKind(Ran, ran), "loaded": CheckKind(Loaded, loaded), "written_by": CheckKind(WrittenBy, written_by),
    "cpu_seconds": CheckKind(CpuSeconds, cpu_seconds), "distinct": CheckKind(Distinct, distinct),
})
