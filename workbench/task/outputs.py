"""Output roots: the top-level directories of a submission that the replay regenerates.

The replay wipes every ``[metadata.replay] outputs`` root, runs reproduce.sh, and freezes the regenerated roots
next to the sources as delivered. A rubric path under any other top-level entry therefore reads what the
submission shipped, not what the replay computed: right for sources (``src/model.py``, ``reproduce.sh``),
a hole for results. Importers derive the roots from a rubric's evidence paths; ``task check`` fails on
a path that reads neither a root nor a source.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..evidence import normalize
from ..paths import ENTRY, TaskPaths
from ..rubric import Leaf, Rubric

GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class EvidenceRead:
    """One evidence path a leaf reads (``field`` says where in the leaf: ``check.path``, ...)."""

    leaf: Leaf
    field: str
    path: str  # as written in the rubric
    declared_source: bool  # an evidence input whose kind says it is a source (PaperBenchX: source*)

    @property
    def top(self) -> str | None:
        """The top-level entry under submission/ it reads; None for replay/ paths and the whole submission."""
        top_dir, _, rest = normalize(self.path).partition("/")
        name = rest.split("/", 1)[0]
        return name if top_dir == "submission" and name not in ("", ".") else None

    @property
    def names_a_directory(self) -> bool:
        """Whether the path goes below its top-level entry (``results/x.json``, ``results/``)."""
        return "/" in normalize(self.path).partition("/")[2]

    @property
    def is_glob(self) -> bool:
        return bool(self.top and GLOB_CHARS & set(self.top))


def evidence_reads(rubric: Rubric) -> list[EvidenceRead]:
    """Every ``evidence_inputs[].path`` and ``check.path`` of every leaf."""
    out = []
    for lf in rubric.leaves:
        for i, ei in enumerate(lf.node.evidence_inputs):
            out.append(EvidenceRead(lf, f"evidence_inputs[{i}].path", ei.path,
                                    (ei.kind or "").lower().startswith("source")))
        path = (lf.node.check or {}).get("path")
        if isinstance(path, str):
            out.append(EvidenceRead(lf, "check.path", path, False))
    return out


def package_sources(paths: TaskPaths, reads: Iterable[EvidenceRead] = ()) -> set[str]:
    """Top-level entries a submission delivers as-is: those of solution/ (of the starter submission when
    there is no solution), reproduce.sh, and those the rubric itself declares sources."""
    base = paths.solution if paths.solution.is_dir() else paths.starter
    names = {p.name for p in base.iterdir()} if base.is_dir() else set()
    return names | {ENTRY} | {r.top for r in reads if r.declared_source and r.top and not r.is_glob}


def derive_outputs(reads: Iterable[EvidenceRead], sources: set[str]) -> tuple[list[str], list[EvidenceRead]]:
    """(output roots, reads that cannot name one): the top-level directories read that are not sources;
    a glob or a top-level file outside the sources cannot be a root (roots are directories)."""
    roots, unusable = set(), []
    for r in reads:
        if r.top is None or r.top in sources:
            continue
        if r.is_glob or not r.names_a_directory:
            unusable.append(r)
        else:
            roots.add(r.top)
    return sorted(roots), unusable


def undeclared_reads(reads: Iterable[EvidenceRead], outputs: Iterable[str], sources: set[str]) -> list[EvidenceRead]:
    """Reads under submission/ whose top-level entry is neither an output root nor a source (a glob
    counts by its top-level component, so ``*.json`` at the top matches whatever the submission ships)."""
    allowed = set(outputs) | sources
    return [r for r in reads if r.top is not None and r.top not in allowed]


def describe(r: EvidenceRead, source: str | Path) -> str:
    """``<rubric file>: <leaf path> (id <id>): <field> '<path>'``: where a read is, on one line."""
    return f"{source}: {r.leaf.path} (id {r.leaf.id}): {r.field} {r.path!r}"
