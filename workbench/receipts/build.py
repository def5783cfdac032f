"""Receipts from the recorder's raw record (:mod:`.raw`): processes, their images, their writes, their CPU.

What decides, and what only describes: a process is its (pid, start time); a program is the file the
kernel executed, and where it lives is decided by its device (the sandbox's volume, memory, or a read-only
tree the submission cannot write), never by the path ``execve`` was given, which is kept for display only. A
file's writers are the (process, image) pairs that put bytes into its inode, recorded as they wrote, so a
rename, a copy or a reused pid moves no credit. CPU samples are resolved to the executable mapping they were
in; code in memory the process could write (anonymous or re-protected executable memory, a file of the
submission's) is ``unverified``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .model import TRUSTED, CodeTime, Image, Origin, ProcessReceipt, Receipts, Write
from .raw import MEMORY_FS, Exec, Key, RawRecord

MAX_CODE_ROWS = 40
MAX_LISTED = 2000
MAX_PROCESSES = 50_000  # listed: a minimal process is ~300 bytes of receipts.json, which a reader must parse
MAX_IMAGES = 64  # per process


def package_of(chain: tuple[str, ...]) -> str | None:
    """The Python package a file belongs to, from the kernel's dentry names above it: the directory (or
    module) right under ``site-packages``/``dist-packages``; distribution metadata is not a package."""
    for i, part in enumerate(chain[:-1]):
        if part.endswith("-packages"):
            name = chain[i + 1]
            if name.endswith((".dist-info", ".egg-info", ".pth")):
                return None
            if i + 1 == len(chain) - 1:  # a module file right in site-packages
                name = re.split(r"[.\-]", name)[0]
            return name.removesuffix(".libs") or None
    return None


@dataclass
class _Proc:
    pid: int
    start: int
    ppid: int | None = None
    parent: Key | None = None
    end: int | None = None
    execs: list[Exec] = field(default_factory=list)
    images: list[Image] = field(default_factory=list)
    spans: list[tuple[int, int | None]] = field(default_factory=list)  # each image's (from, until) in ns
    cpu_ns: int = 0
    rss_pages: int = 0


def build(raw: RawRecord, *, inodes: dict[int, list[str]], env_dir: str | None, image: bool = False,
          generations: dict[int, int] | None = None) -> Receipts:
    """Receipts of one replay. ``inodes``: the volume's files after the replay, inode -> evidence-relative
    paths; ``generations``: their inodes' generations (a write into an earlier, deleted file on a reused inode
    is not a write into the file there now); ``env_dir``: the task's environment (its programs' origin is
    ``environment``); ``image``: the replay ran in the task's container image (all of whose read-only files
    are the task's environment)."""
    writable = raw.writable_devs

    def origin(dev: int | None, magic: int, key: tuple[int, int] | None = None) -> Origin:
        if dev is None:
            return "unknown"
        if dev in writable:
            return "submission"
        if magic in MEMORY_FS:
            return "tmp"
        if image:
            return "environment"
        path = raw.program_paths.get(key) if key else None
        if env_dir and path and path.startswith(env_dir.rstrip("/") + "/"):
            return "environment"
        return "system"

    procs = _processes(raw)
    t0 = min((e.ns for e in raw.execs), default=min((p.start for p in procs.values()), default=0))

    def sec(ns: int | None) -> float | None:
        return None if ns is None else round((ns - t0) / 1e9, 6)

    for key in sorted(procs, key=lambda k: (k[1], k[0])):  # parents start before their children
        p = procs[key]
        first = p.execs[0].ns if p.execs else None
        parent = procs.get(p.parent) if p.parent else None
        if parent is not None and parent.images and (first is None or first > p.start):
            i = _image_index(parent, p.start)
            had = parent.images[i]
            p.images.append(Image(name=had.name, origin=had.origin, dev=had.dev, ino=had.ino, sha256=had.sha256,
                                  file=had.file, inherited=True, parent_image=i))
            p.spans.append((p.start, first))
        for i, e in enumerate(p.execs):
            until = p.execs[i + 1].ns if i + 1 < len(p.execs) else None
            named = raw.named.get(key, [])
            own = (inodes.get(e.ino) or [None])[0] if e.dev in writable else None
            p.images.append(Image(name=e.name, named=named[i] if i < len(named) else None,
                                  origin=origin(e.dev, e.magic, (e.dev, e.ino)), dev=e.dev, ino=e.ino, file=own,
                                  sha256=raw.program_hashes.get((e.dev, e.ino)), at_sec=sec(e.ns)))
            p.spans.append((e.ns, until))
    _loads(raw, procs, writable)
    for key in sorted(procs, key=lambda k: (k[1], k[0])):  # a fork runs whatever code its parent had loaded
        p = procs[key]
        if p.images and p.images[0].inherited:
            p.images[0].foreign_code |= procs[p.parent].images[p.images[0].parent_image].foreign_code
    reads = _reads(raw, procs, writable, inodes)
    files, wrote = _writes(raw, procs, inodes, generations or {})
    cpu = _cpu_code(raw, procs, writable, tampered=bool(raw.taints))

    out = []
    for key, p in procs.items():
        if not p.images:
            continue  # a process of the uid seen only in part (the launcher before its exec): nothing to say
        last = p.images[-1]
        out.append(ProcessReceipt(
            key=_name(key), pid=p.pid, ppid=p.ppid, parent=_name(p.parent) if p.parent in procs else None,
            program=last.name, programs=[im.name for im in p.images], origin=last.origin, sha256=last.sha256,
            images=p.images, started_sec=sec(p.start) if p.start >= t0 else 0.0, ended_sec=sec(p.end),
            cpu_sec=round(p.cpu_ns / 1e9, 4),
            peak_rss_mb=round(p.rss_pages * 4096 / 2**20, 2) if p.rss_pages else None,
            packages=sorted({x for im in p.images for x in im.packages}),
            libraries=sorted({x for im in p.images for x in im.libraries}),
            read=sorted(reads.get(key, ()))[:MAX_LISTED], wrote=sorted(wrote.get(key, ()))[:MAX_LISTED],
            cpu_code=cpu.get(key, [])))
    problems = list(raw.problems)
    if len(out) > MAX_PROCESSES:  # writers first (checks need them), then by CPU
        problems.append(f"more than {MAX_PROCESSES} processes ({len(out)}); only {MAX_PROCESSES} are listed")
        out.sort(key=lambda r: (not r.wrote, -r.cpu_sec))
        out = out[:MAX_PROCESSES]
    if any(len(p.execs) > MAX_IMAGES for p in procs.values()):
        problems.append(f"a process executed more than {MAX_IMAGES} programs; only its first {MAX_IMAGES} are kept")
        for r in out:
            r.images = r.images[:MAX_IMAGES]
            r.programs = r.programs[:MAX_IMAGES]
    out.sort(key=lambda r: (r.started_sec or 0, r.pid))
    return Receipts(complete=not problems, problems=problems[:50], tampered=sorted(set(raw.taints))[:20],
                    mechanism=raw.mechanism, processes=out, files=files,
                    total_cpu_sec=round(sum(p.cpu_ns for p in procs.values()) / 1e9, 4), sample_hz=raw.sample_hz)


def _name(key: Key | None) -> str | None:
    return None if key is None else f"{key[0]}@{key[1]}"


def _processes(raw: RawRecord) -> dict[Key, _Proc]:
    """Every (pid, start) the record names, with its parent, its execs and its end."""
    procs: dict[Key, _Proc] = {}

    def get(pid: int, start: int) -> _Proc:
        p = procs.get((pid, start))
        if p is None:
            p = procs[(pid, start)] = _Proc(pid, start)
        return p

    for e in sorted(raw.execs, key=lambda e: e.ns):
        p = get(e.pid, e.start)
        p.execs.append(e)
        p.ppid, p.parent = e.ppid, p.parent or (e.ppid, e.pstart)
    for x in raw.exits.values():
        p = get(x.pid, x.start)
        p.end, p.cpu_ns, p.rss_pages = x.ns, x.cpu_ns, x.rss_pages
    for o in raw.opens:
        get(o.pid, o.start)
    for m in raw.maps:
        get(m.pid, m.start)
    starts: dict[int, list[int]] = {}
    for pid, start in procs:
        starts.setdefault(pid, []).append(start)
    for v in starts.values():
        v.sort()
    for f in raw.forks:  # the child is the incarnation of its pid that started last before the fork returned
        cands = starts.get(f.child, [])
        i = bisect.bisect_right(cands, f.ns)
        if i:
            child = procs[(f.child, cands[i - 1])]
            if child.parent is None or not child.execs:
                child.ppid, child.parent = f.ppid, (f.ppid, f.pstart)
    return procs


def _image_at(p: _Proc, ns: int) -> Image:
    return p.images[_image_index(p, ns)]


def _loads(raw: RawRecord, procs: dict[Key, _Proc], writable: frozenset[int]) -> None:
    """Packages and libraries each image loaded from the read-only trees; code from anywhere else."""
    for o in raw.opens:
        p = procs.get((o.pid, o.start))
        if p is None or not p.images or o.dev in writable or o.magic in MEMORY_FS:
            continue
        im = _image_at(p, o.ns)
        if (pkg := package_of(o.chain)) and pkg not in im.packages:
            im.packages.append(pkg)
        if o.chain and ".so" in o.chain[-1] and o.chain[-1] not in im.libraries:
            im.libraries.append(o.chain[-1])
    for m in raw.maps:
        p = procs.get((m.pid, m.start))
        if p is None or not p.images or m.dev is None:
            continue  # anonymous code: the process's own (a JIT, a trampoline); its CPU is `unverified`
        im = _image_at(p, m.ns)
        if m.dev in writable or m.magic in MEMORY_FS or m.writable:
            im.foreign_code = True  # a library of the submission's, or file pages it could have rewritten
        elif (pkg := package_of(m.chain)) and pkg not in im.packages:
            im.packages.append(pkg)
    for p in procs.values():
        for im in p.images:
            im.packages.sort()
            im.libraries.sort()


def _reads(raw, procs, writable, inodes) -> dict[Key, set[str]]:
    out: dict[Key, set[str]] = {}
    for o in raw.opens:
        if o.dev in writable and not o.mode & 2 and (o.pid, o.start) in procs:
            out.setdefault((o.pid, o.start), set()).update(inodes.get(o.ino, ()))
    return out


def _writes(raw, procs, inodes, generations) -> tuple[dict[str, list[Write]], dict[Key, set[str]]]:
    """Per file of the package: every (process, image) that wrote into its inode while it was this file."""
    rows: dict[str, dict[tuple, Write]] = {}
    wrote: dict[Key, set[str]] = {}
    for w in raw.writes:
        paths = inodes.get(w.ino, []) if w.dev in raw.writable_devs else []
        if w.gen is not None and generations.get(w.ino, w.gen) != w.gen:
            continue  # a file deleted before this one was made on its inode
        p = procs.get((w.pid, w.start))
        if not paths:
            continue
        image = _image_index(p, w.ns) if p is not None and p.images else None
        process = _name((w.pid, w.start)) if image is not None else None
        for rel in paths:
            rows.setdefault(rel, {}).setdefault((process, w.pid, image), Write(process=process, pid=w.pid,
                                                                               image=image))
            if image is not None:
                wrote.setdefault((w.pid, w.start), set()).add(rel)
    return {rel: list(v.values()) for rel, v in rows.items()}, wrote


def _image_index(p: _Proc, ns: int) -> int:
    for i in range(len(p.spans) - 1, -1, -1):
        if p.spans[i][0] <= ns:
            return i
    return 0


def _cpu_code(raw: RawRecord, procs: dict[Key, _Proc], writable, *, tampered: bool) -> dict[Key, list[CodeTime]]:
    """Each process's sampled CPU by the code it was in (see the module's docstring)."""
    if not raw.sample_hz:
        return {}
    own: dict[Key, list[tuple[int, int, tuple]]] = {}  # key -> (lo, hi, label) with label (code, package, ok)
    for m in raw.maps:
        if m.dev is None or m.dev in writable or m.magic in MEMORY_FS or m.writable:
            label = ("unverified", None, False)
        else:
            label = (m.chain[-1] if m.chain else "?", package_of(m.chain), True)
        own.setdefault((m.pid, m.start), []).append((m.addr, m.addr + m.length, label))
    for key, p in procs.items():
        for e, im in zip(p.execs, [im for im in p.images if not im.inherited], strict=True):
            label = ("unverified", None, False) if im.foreign_code else (im.name, None, im.origin in TRUSTED)
            own.setdefault(key, []).append((e.code_lo, e.code_hi, label))

    memo: dict[Key, list[tuple[int, int, tuple]]] = {}

    def intervals(key: Key, depth: int = 0) -> list[tuple[int, int, tuple]]:
        if key in memo:
            return memo[key]
        p = procs.get(key)
        mine = list(own.get(key, []))
        if p is not None and not p.execs and p.parent and depth < 64:  # a fork runs its parent's code
            mine += intervals(p.parent, depth + 1)
        memo[key] = sorted(mine, key=lambda t: (t[0], t[1]))
        return memo[key]

    def resolve(key: Key, ip: int) -> tuple:
        if ip == 0:
            return ("kernel", None, False)
        ivs = intervals(key)
        hits = {lab for lo, hi, lab in ivs[:bisect.bisect_right(ivs, (ip, float("inf")))] if lo <= ip < hi}
        if any(not ok for _, _, ok in hits):
            return ("unverified", None, False)
        return hits.pop() if len(hits) == 1 else ("unattributed", None, False)

    per: dict[Key, dict[tuple, int]] = {}
    for (pid, start, ip), n in raw.samples.items():
        lab = resolve((pid, start), ip)
        d = per.setdefault((pid, start), {})
        d[lab] = d.get(lab, 0) + n
    out: dict[Key, list[CodeTime]] = {}
    for key, d in per.items():
        rows = sorted(d.items(), key=lambda kv: -kv[1])
        out[key] = [CodeTime(code=code, package=pkg, trusted=ok and not tampered, cpu_sec=round(n / raw.sample_hz, 3))
                    for (code, pkg, ok), n in rows[:MAX_CODE_ROWS]]
    return out
