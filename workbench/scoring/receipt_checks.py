"""Check kinds on execution receipts (:mod:`workbench.receipts`): did the domain software really run?

A rubric can ask that a number was earned by running the science, not typed in:

* ``ran``: ``program`` (the file the kernel executed, from the system or the task's environment, e.g.
  ``pw.x``, with no code of the submission's loaded into it) ran ``min_runs`` times, each for at least
  ``min_cpu_sec`` CPU seconds;
* ``loaded``: some process loaded a Python package or shared library (``pyscf``, ``libmeep``, ``mujoco``),
  with at least ``min_cpu_sec`` CPU seconds in that process, *whatever code spent them* (a loop after the
  import counts: use ``cpu_in`` to ask for the domain code's own work);
* ``cpu_in``: at least ``min_cpu_sec`` CPU seconds were spent *inside* the domain code: the executable
  ``program``, the compiled files of Python ``package``, or the shared ``library`` (sampled instruction
  addresses; padding in other code, the interpreter or a shared BLAS does not count);
* ``written_by``: every process that wrote into a file matching ``path`` (its inode, as it wrote) is
  ``program`` or had loaded ``package`` (a copy, a ``cat``, a shell that wrote before running the program, a
  rename over it, a writer the recorder could not place: each fails it), and at least ``min_files`` match;
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
    r = receipts_of(ev)
    runs = r.runs_of(p.program)
    good = [x for x in runs if x.cpu_sec >= p.min_cpu_sec]
    ok = len(good) >= p.min_runs
    text = (f"{p.program} ran {len(runs)} time(s), {len(good)} with >= {p.min_cpu_sec:g} CPU s "
            f"({_cpu(runs)} in all; need {p.min_runs})")
    if r.tampered:
        text += "; the replay's code cannot be verified: " + "; ".join(r.tampered[:2])
    return _outcome(ok, text, ["replay/receipts.json"])


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
    who = p.program or p.package
    bad = []
    for rel in sorted(frozen):
        writers = r.writes_of(rel)
        if not writers:
            bad.append(f"{rel}: no recorded process wrote it")
            continue
        others = sorted({r.writer_name(w) for w in writers if not r.writer_is(w, program=p.program,
                                                                               package=p.package)})
        if others:
            bad.append(f"{rel}: written by {', '.join(others)}, not {who}")
    if r.tampered and p.program:
        bad.insert(0, "the replay's code cannot be verified: " + "; ".join(r.tampered[:2]))
    ok = not bad and len(frozen) >= p.min_files
    text = (f"{len(frozen)} file(s) match {p.path}, all written by {who}" if not bad
            else f"{len(bad)} of {len(frozen)} file(s) not written by {who}: " + "; ".join(bad[:4]))
    if not bad and len(frozen) < p.min_files:
        text += f" (need {p.min_files})"
    return _outcome(ok, text, [*sorted(frozen), "replay/receipts.json"])


class CpuIn(_Params):
    program: str | None = None
    package: str | None = None
    library: str | list[str] | None = None
    min_cpu_sec: float = Field(gt=0)

    @model_validator(mode="after")
    def _one(self):
        if sum(x is not None for x in (self.program, self.package, self.library)) != 1:
            raise ValueError("give exactly one of program, package or library")
        return self


def cpu_in(ev: Evidence, p: CpuIn) -> CheckOutcome:
    r = receipts_of(ev)
    got = r.cpu_in(program=p.program, package=p.package, library=p.library)
    where = p.program or p.package or " + ".join([p.library] if isinstance(p.library, str) else p.library or [])
    text = f"{got:.2f} CPU s sampled inside {where} (need >= {p.min_cpu_sec:g})"
    if r.tampered:
        text += "; the replay's code cannot be verified: " + "; ".join(r.tampered[:2])
    elif got < p.min_cpu_sec:
        top = sorted(((c.code, c.cpu_sec) for q in r.processes for c in q.cpu_code), key=lambda t: -t[1])[:3]
        text += "; most CPU went to " + ", ".join(f"{c} ({s:.1f} s)" for c, s in top) if top else ""
    return _outcome(got >= p.min_cpu_sec and not r.tampered, text, ["replay/receipts.json"])


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
    "cpu_in": CheckKind(CpuIn, cpu_in),
})
