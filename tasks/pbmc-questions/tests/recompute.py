"""Spot recomputation for pbmc-questions (PRIVATE: run by the scorer in the task's scanpy environment, confined).

``wilcoxon_table`` re-runs the analysis the contract names, ``sc.tl.rank_genes_groups(adata, "bulk_labels",
method="wilcoxon", use_raw=True)`` on the packaged pbmc68k_reduced restricted to the cells ``inputs.json`` lists,
for BOTH replays: the public one (all 700 cells) and the secret one (the subsample tests/secret_inputs.py drew
for this scoring, read from the frozen ``secret/replay/input/inputs.json``), and compares each with the full
table that replay delivered in ``results/markers.csv`` (every population x every gene: group, names, scores,
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
import json
import math
import os
from pathlib import Path

TABLE = "submission/results/markers.csv"
SECRET_TABLE = "secret/submission/results/markers.csv"
SECRET_INPUTS = "secret/replay/input/inputs.json"


def _reference(cells: list[str] | None = None):
    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba")
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/mpl")
    import scanpy as sc

    adata = sc.datasets.pbmc68k_reduced()
    if cells is not None:
        adata = adata[cells].copy()
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
    """Both replays' tables against the scorer's own ranking for the cells each replay was given."""
    public = _one_table(evidence, TABLE, None, rel_tol, abs_tol, top)
    if public["score"] != 1.0:
        return public
    try:
        cells = json.loads((evidence / SECRET_INPUTS).read_text())["cells"]
        known = set(_all_cells())
        if not isinstance(cells, list) or not cells or not all(isinstance(c, str) and c in known for c in cells):
            raise ValueError("not a list of the data set's cells")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return {"score": 0.0, "rationale": f"public table: {public['rationale']}; no secret replay inputs to "
                                           f"recompute ({SECRET_INPUTS}: {exc})"}
    secret = _one_table(evidence, SECRET_TABLE, cells, rel_tol, abs_tol, top)
    return {"score": secret["score"],
            "rationale": f"public replay (700 cells): {public['rationale']}. Secret replay ({len(cells)} cells "
                         f"drawn for this scoring): {secret['rationale']}"}


def _all_cells() -> list[str]:
    import scanpy as sc

    return [str(c) for c in sc.datasets.pbmc68k_reduced().obs_names]


def _one_table(evidence: Path, table: str, cells: list[str] | None, rel_tol: float, abs_tol: float,
               top: int) -> dict:
    path = evidence / table
    if not path.is_file():
        return {"score": 0.0, "rationale": f"{table}: missing (the full Wilcoxon table is a deliverable)"}
    text = path.read_text(encoding="utf-8", errors="replace")
    rows = list(csv.DictReader(io.StringIO(text)))
    need = {"group", "names", "scores", "logfoldchanges"}
    if not rows or not need <= set(rows[0]):
        return {"score": 0.0, "rationale": f"{table}: needs the columns {sorted(need)}; has "
                                           f"{sorted(rows[0]) if rows else 'no rows'}"}
    got: dict[str, list[tuple[str, float, float]]] = {}
    for r in rows:
        try:
            got.setdefault(r["group"].strip(), []).append((r["names"].strip(), float(r["scores"]),
                                                           float(r["logfoldchanges"])))
        except (TypeError, ValueError):
            return {"score": 0.0, "rationale": f"{table}: a row is not numeric: {dict(r)}"[:300]}
    ref = _reference(cells)
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
