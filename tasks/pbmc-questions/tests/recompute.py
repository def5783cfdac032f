"""Spot recomputation for pbmc-questions (PRIVATE: run by the scorer in the task's scanpy environment, confined).

``wilcoxon_table`` re-runs the analysis the contract names, ``sc.tl.rank_genes_groups(adata, "bulk_labels",
method="wilcoxon", use_raw=True)`` on the packaged pbmc68k_reduced, and compares it with the full table the
submission delivered in ``results/markers.csv`` (every population x every gene: group, names, scores,
logfoldchanges, pvals, pvals_adj). Every row must be there with the score and log fold change scanpy
gives (tolerances in TOLERANCES.md: float32 values printed unrounded agree to ~1e-7), each group's rows in
rank order with the same top 10 genes. 7650 scores and log fold changes are tens of KB of incompressible
numbers: a package that ships them instead of computing them fails the package-size gate, a table of
another analysis (a subset of the cells, a t-test, the FACS labels shuffled) fails here.

Runs without the workbench: scanpy (for the data set and the test), NumPy.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

TABLE = "submission/results/markers.csv"


def _reference():
    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba")
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/mpl")
    import scanpy as sc

    adata = sc.datasets.pbmc68k_reduced()
    sc.tl.rank_genes_groups(adata, "bulk_labels", method="wilcoxon", use_raw=True)
    df = sc.get.rank_genes_groups_df(adata, group=None)
    ref: dict[str, list[tuple[str, float, float]]] = {}
    for g, n, s, lfc in zip(df["group"].astype(str), df["names"].astype(str), df["scores"], df["logfoldchanges"],
                            strict=True):
        ref.setdefault(g, []).append((n, float(s), float(lfc)))
    return ref


def _close(a: float, b: float, rel: float, abs_: float) -> bool:
    return math.isfinite(a) and abs(a - b) <= max(abs_, rel * abs(b))


def wilcoxon_table(evidence: Path, rel_tol: float = 1e-5, abs_tol: float = 1e-5, top: int = 10) -> dict:
    path = evidence / TABLE
    if not path.is_file():
        return {"score": 0.0, "rationale": f"{TABLE}: missing (the full Wilcoxon table is a deliverable)"}
    text = path.read_text(encoding="utf-8", errors="replace")
    rows = list(csv.DictReader(io.StringIO(text)))
    need = {"group", "names", "scores", "logfoldchanges"}
    if not rows or not need <= set(rows[0]):
        return {"score": 0.0, "rationale": f"{TABLE}: needs the columns {sorted(need)}; has "
                                           f"{sorted(rows[0]) if rows else 'no rows'}"}
    got: dict[str, list[tuple[str, float, float]]] = {}
    for r in rows:
        try:
            got.setdefault(r["group"].strip(), []).append((r["names"].strip(), float(r["scores"]),
                                                           float(r["logfoldchanges"])))
        except (TypeError, ValueError):
            return {"score": 0.0, "rationale": f"{TABLE}: a row is not numeric: {dict(r)}"[:300]}
    ref = _reference()
    problems: list[str] = []
    if set(got) != set(ref):
        problems.append(f"groups {sorted(got)} are not the {len(ref)} populations {sorted(ref)}")
    checked = 0
    for g, want in ref.items():
        have = got.get(g, [])
        if len(have) != len(want):
            problems.append(f"{g}: {len(have)} rows, not {len(want)} (one per gene)")
            continue
        if [n for n, _, _ in have[:top]] != [n for n, _, _ in want[:top]]:
            problems.append(f"{g}: top {top} {[n for n, _, _ in have[:top]]} vs {[n for n, _, _ in want[:top]]}")
        if any(b[1] > a[1] + abs_tol for a, b in zip(have, have[1:], strict=False)):
            problems.append(f"{g}: rows are not in rank order (scores increase)")
        by_gene = {n: (s, lfc) for n, s, lfc in have}
        bad = [n for n, s, lfc in want if n not in by_gene or not _close(by_gene[n][0], s, rel_tol, abs_tol)
               or not _close(by_gene[n][1], lfc, 10 * rel_tol, 10 * abs_tol)]
        checked += len(want)
        if bad:
            n = bad[0]
            problems.append(f"{g}: {len(bad)} gene(s) differ from the scorer's Wilcoxon test, e.g. {n}: submitted "
                            f"{by_gene.get(n)}, recomputed {next((s, lfc) for m, s, lfc in want if m == n)}")
    if problems:
        return {"score": 0.0, "rationale": "the submitted table is not this data set's Wilcoxon ranking: "
                                           + "; ".join(problems[:4]) + (" ..." if len(problems) > 4 else "")}
    return {"score": 1.0, "rationale": f"all {checked} (population, gene) scores and log fold changes equal the "
                                       f"scorer's own rank_genes_groups (wilcoxon, use_raw) within rel {rel_tol:g}; "
                                       f"top {top} of every population in the same order"}
