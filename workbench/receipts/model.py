"""``replay/receipts.json``: what a replay ran, as the kernel saw it (the workbench writes it beside the
provenance, which holds its digest; :mod:`.build` makes it from the recorder's raw record).

* **processes**, each a (pid, start time) pair that is never reused, with its **images**: every program it
  ran, each the file the kernel executed (device and inode, its own name, its content hash), where that file
  lives (``system`` and ``environment``: read-only trees the submission cannot write; ``submission``: the
  package's volume; ``tmp``: memory), the Python packages and shared libraries it loaded (files of those
  read-only trees only), and whether it ran code from anything else (``foreign_code``: a library of the
  submission's, anonymous or re-protected executable memory);
* its CPU seconds (the kernel's accounting) and **where they went** (``cpu_code``: sampled instruction
  addresses resolved to the executable file or library they were in);
* per file of the package: every process that put bytes into it (its inode, so a rename or a copy moves no
  credit) and the image it was running as it wrote; a writer the recorder could not place is kept with
  ``process`` None, and it fails every check that asks who wrote the file;
* ``complete``: false when the recorder could not see everything (a flood made the kernel drop events, a
  bound was reached, the end of a stream could not be shown); every check that needs receipts then fails,
  since a submission could otherwise hide its work. ``tampered``: what made every process's code
  unverifiable (``ptrace``, writing another process's memory); program and CPU checks then fail.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr

Origin = Literal["system", "environment", "submission", "tmp", "unknown"]
TRUSTED: tuple[Origin, ...] = ("system", "environment")
SCHEMA = 2


def program_matches(name: str, want: str) -> bool:
    """Whether the executed file ``name`` (the kernel's) is the program ``want`` (a name or a path, of which
    the name counts): the same name, or the name with a version after it (``python3`` is ``python3.11``)."""
    want = Path(want.rstrip("/")).name
    return bool(want) and re.fullmatch(re.escape(want) + r"(\.\d+)*", name) is not None


class Image(BaseModel):
    """One program a process ran, from its exec to the next (or, for a fork that never executed anything,
    its parent's program at the fork: ``inherited``)."""

    name: str  # the executed file's own name, as the kernel has it
    named: str | None = None  # the path execve was called with: display only, never trusted
    origin: Origin
    dev: int | None = None
    ino: int | None = None
    sha256: str | None = None  # of the executed file (read only once proven to be that inode)
    file: str | None = None  # the package's file it was, for a program the submission ships
    at_sec: float | None = None  # since the replay's first exec
    inherited: bool = False
    parent_image: int | None = None  # inherited: which of the parent's images (what it loaded is the parent's too)
    packages: list[str] = Field(default_factory=list)  # Python packages it loaded (read-only trees only)
    libraries: list[str] = Field(default_factory=list)  # shared libraries it loaded (read-only trees only)
    foreign_code: bool = False

    @property
    def trusted(self) -> bool:
        return self.origin in TRUSTED and not self.foreign_code

    def loaded(self, package: str) -> bool:
        """Whether it loaded the Python package or shared library ``package`` (``pyscf``, ``libmeep``)."""
        return package in self.packages or any(
            lib == package or lib.startswith((package + ".", package + "-")) for lib in self.libraries)


class CodeTime(BaseModel):
    """CPU time a process spent in one piece of code (sampled)."""

    code: str  # a file's own name (libcint.so.6, pw.x), or kernel | unverified | unattributed
    package: str | None = None  # the Python package whose tree holds that file
    trusted: bool = False  # a file of a read-only tree, mapped read-only and executable
    cpu_sec: float


class ProcessReceipt(BaseModel):
    key: str  # "pid@start": one process, never reused
    pid: int
    ppid: int | None = None
    parent: str | None = None  # its parent's key, where the parent was recorded
    program: str  # the last image's name
    programs: list[str] = Field(default_factory=list)  # every image's name, in order
    origin: Origin
    sha256: str | None = None  # of the last image's file
    images: list[Image] = Field(default_factory=list)
    started_sec: float | None = None  # since the replay's first exec
    ended_sec: float | None = None
    cpu_sec: float = 0.0
    peak_rss_mb: float | None = None
    packages: list[str] = Field(default_factory=list)  # of every image (its own loads)
    libraries: list[str] = Field(default_factory=list)
    read: list[str] = Field(default_factory=list)  # evidence-relative files of the package it opened to read
    wrote: list[str] = Field(default_factory=list)  # evidence-relative files it closed after writing
    cpu_code: list[CodeTime] = Field(default_factory=list)  # largest first



class Write(BaseModel):
    """A writer of a file: the process (None: the recorder could not place it) and the image it ran as it
    wrote."""

    process: str | None
    pid: int
    image: int | None = None


class Receipts(BaseModel):
    schema_version: int = SCHEMA
    complete: bool
    problems: list[str] = Field(default_factory=list)  # why not complete ("no receipts: ..." = not recorded)
    tampered: list[str] = Field(default_factory=list)
    mechanism: dict[str, str] = Field(default_factory=dict)
    processes: list[ProcessReceipt] = Field(default_factory=list)
    files: dict[str, list[Write]] = Field(default_factory=dict)  # evidence-relative path -> its writers
    total_cpu_sec: float = 0.0
    sample_hz: int = 0
    _by_key: dict[str, ProcessReceipt] | None = PrivateAttr(default=None)

    # --- what checks ask ---------------------------------------------------------------------------

    def by_key(self) -> dict[str, ProcessReceipt]:
        """Processes by key (built once: checks ask for every writer of every file)."""
        if self._by_key is None or len(self._by_key) != len(self.processes):
            self._by_key = {p.key: p for p in self.processes}
        return self._by_key

    def runs_of(self, program: str) -> list[ProcessReceipt]:
        """Processes that ran ``program`` (e.g. ``pw.x``): the file the kernel executed has that name, lives
        in the system or the task's environment, and the process ran no code of anyone else's. A program
        the submission ships, copies, links or names does not count."""
        if self.tampered:
            return []
        return [p for p in self.processes if any(im.trusted and not im.inherited and program_matches(im.name, program)
                                                 for im in p.images)]

    def loaders_of(self, package: str) -> list[ProcessReceipt]:
        """Processes that loaded a Python package or a shared library of that name (``pyscf``, ``libmeep``)
        from the system or the task's environment (a fork holds what its parent had loaded)."""
        return [p for p in self.processes if any(self.image_loaded(p, i, package) for i in range(len(p.images)))]

    def image_loaded(self, p: ProcessReceipt, i: int, package: str) -> bool:
        """Whether ``p``'s image ``i`` had ``package`` loaded: its own loads, and for a fork that had not
        executed anything, its parent's image's (followed up to 64 generations)."""
        for _ in range(64):
            if i >= len(p.images):
                return False
            im = p.images[i]
            if im.loaded(package):
                return True
            parent = self.by_key().get(p.parent or "")
            if not im.inherited or im.parent_image is None or parent is None:
                return False
            p, i = parent, im.parent_image
        return False

    def writes_of(self, path: str) -> list[Write]:
        """Who wrote ``path`` (evidence-relative): each (process, image) once."""
        return list(self.files.get(path, []))

    def writers_of(self, path: str) -> list[ProcessReceipt]:
        """The processes that wrote ``path`` (evidence-relative); a writer the recorder could not place is
        left out (``writes_of`` keeps it, and ``written_by`` fails on it)."""
        keys = self.by_key()
        return list({w.process: keys[w.process] for w in self.files.get(path, []) if w.process in keys}.values())

    def executed_by(self, w: Write) -> ProcessReceipt | None:
        """The process that executed the program ``w`` ran as it wrote: the writer itself, or for a fork that
        had not executed anything, the ancestor whose image it inherited."""
        p, i = self.by_key().get(w.process or ""), w.image
        for _ in range(64):
            if p is None or i is None or i >= len(p.images):
                return None
            im = p.images[i]
            if not im.inherited:
                return p
            p, i = self.by_key().get(p.parent or ""), im.parent_image
        return None

    def writer_is(self, w: Write, *, program: str | None = None, package: str | None = None) -> bool:
        """Whether ``w`` was ``program`` writing, or a process whose image (as it wrote) had loaded
        ``package``."""
        p = self.by_key().get(w.process or "")
        if p is None or w.image is None or w.image >= len(p.images):
            return False
        im = p.images[w.image]
        if program is not None:
            return not self.tampered and im.trusted and program_matches(im.name, program)
        return self.image_loaded(p, w.image, package or "")

    def writer_name(self, w: Write) -> str:
        p = self.by_key().get(w.process or "")
        if p is None or w.image is None or w.image >= len(p.images):
            return "a process the recorder could not place"
        return p.images[w.image].name

    def cpu_in(self, *, program: str | None = None, package: str | None = None,
               library: str | list[str] | None = None) -> float:
        """CPU seconds sampled inside trusted code: the executable ``program``, the files of Python
        ``package``, or the shared ``library`` (a name or its start, ``libcint``; or a list of them)."""
        libs = [library] if isinstance(library, str) else list(library or [])
        total = 0.0
        for p in self.processes:
            for c in p.cpu_code:
                if not c.trusted:
                    continue
                if ((program and program_matches(c.code, program)) or (package and c.package == package)
                        or any(c.code == lib or c.code.startswith((lib + ".", lib + "-")) for lib in libs)):
                    total += c.cpu_sec
        return round(total, 3)


UNAVAILABLE = "no receipts: "


def unavailable(why: str) -> Receipts:
    """Receipts of a replay that could not be recorded (the workbench's environment lacks the recorder, or
    nothing ran): incomplete, saying why."""
    return Receipts(complete=False, problems=[UNAVAILABLE + why], mechanism={"processes": "none"})
