"""Recomputation for pbmc-markers (PRIVATE: run by the scorer in the task's scanpy environment, confined).

Both replays are checked against the scorer's own computation for the inputs each was given: the public one
(the published ``inputs.json``: all 700 cells, 40 PCs, 15 neighbours, resolution 1, seed 0, frozen at
``replay/input/inputs.json``) and the secret one (a cell subsample and clustering parameters drawn for this
scoring alone by tests/secret_inputs.py, frozen at ``secret/replay/input/inputs.json``).

``wilcoxon_rows`` recomputes, from the log-normalized expression (``.raw``) of the replay's cells, the one-
group-against-the-rest Wilcoxon rank-sum test of EVERY row of each replay's marker table (it is cheap: all
genes of all groups in about a second), so nothing is left to fabricate and no choice of rows can be steered.
The submitted p-value and Benjamini-Hochberg adjusted p-value (over all genes, as scanpy corrects) must match
one of the usual variants of the test: scanpy's normal approximation with or without tie correction, and
SciPy's with a continuity correction.

``clusters_replayed`` re-runs the clustering procedure the instruction pins (scale to max 10, 50 PCs by
ARPACK, ``sc.pp.neighbors(n_neighbors, n_pcs)``, Leiden by igraph with 2 iterations, all seeded with
``seed``) for each replay's inputs and scores its OWN clustering: the delivered clusters must be that
clustering (adjusted Rand index >= 0.95 with the scorer's, on the same cells; measured: the same procedure
agrees exactly, 1.000; another seed 0.92-0.997; the full data's clustering restricted to a secret subsample
0.81-0.91; the data set's shipped Louvain labels 0.65-0.76, lightly edited even less). A bound from both
sides: a clustering that merely is "a clustering, not the labels" no longer passes. A submission that
delivers no clustering in either replay passes (other leaves score its absence).

Runs without the workbench: NumPy, SciPy, scikit-learn and scanpy.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
from pathlib import Path

import numpy as np


def _table(path: Path) -> list[dict[str, str]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


@functools.cache
def _data():
    import scanpy as sc

    shipped = sc.datasets.pbmc68k_reduced()
    x = shipped.raw.X
    x = np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)
    return x, list(shipped.raw.var_names), [str(c) for c in shipped.obs_names], \
        shipped.obs["bulk_labels"].astype(str).to_numpy()


def _ties(x: np.ndarray) -> np.ndarray:
    ties = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        _, counts = np.unique(x[:, j], return_counts=True)
        ties[j] = (counts ** 3 - counts).sum()
    return ties


def _pvalues(x: np.ndarray, in_group: np.ndarray, ties: np.ndarray) -> dict[str, np.ndarray]:
    """Two-sided p-values of every gene for one group against the rest, by variant."""
    from scipy.stats import norm, rankdata

    n = len(in_group)
    n1, n2 = int(in_group.sum()), int((~in_group).sum())
    ranks = rankdata(x, axis=0)
    rank_sum = ranks[in_group].sum(axis=0)
    mean = n1 * (n + 1) / 2.0
    sd = math.sqrt(n1 * n2 * (n + 1) / 12.0)
    sd_tie = sd * np.sqrt(np.clip(1 - ties / (n ** 3 - n), 1e-300, None))
    d = rank_sum - mean
    out = {}
    for name, s, cc in (("normal", sd, 0.0), ("normal, tie-corrected", sd_tie, 0.0),
                        ("tie-corrected, continuity-corrected", sd_tie, 0.5)):
        z = (np.abs(d) - cc).clip(min=0) / np.where(s > 0, s, np.inf)
        out[name] = 2 * norm.sf(z)
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    m = len(p)
    order = np.argsort(p)
    scaled = p[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(scaled[::-1])[::-1].clip(max=1.0)
    out = np.empty(m)
    out[order] = adj
    return out


def _same(submitted: float, expected: float, decades: float) -> bool:
    if not math.isfinite(submitted):
        return False
    if expected < 1e-290:  # underflow: the submission's value must be as vanishing
        return submitted < 1e-250
    if submitted <= 0:
        return False
    return abs(math.log10(submitted) - math.log10(expected)) <= decades


REPLAYS = (("public", "submission/results", "replay/input/inputs.json"),
           ("secret", "secret/submission/results", "secret/replay/input/inputs.json"))


def _inputs(evidence: Path, rel: str) -> dict:
    """A replay's frozen inputs.json, checked against the data set (the scorer's draw or the published file)."""
    raw = json.loads((evidence / rel).read_text())
    _, _, all_cells, _ = _data()
    known = set(all_cells)
    cells = raw.get("cells")
    if not isinstance(cells, list) or not cells or not all(isinstance(c, str) and c in known for c in cells):
        raise ValueError("cells: not a list of the data set's cells")
    for k in ("n_pcs", "n_neighbors", "seed"):
        if not isinstance(raw.get(k), int):
            raise ValueError(f"{k}: not an integer")
    if not isinstance(raw.get("resolution"), int | float):
        raise ValueError("resolution: not a number")
    return raw


def _subset(cells: list[str]):
    x, genes, all_cells, labels = _data()
    pos = {c: i for i, c in enumerate(all_cells)}
    idx = np.array([pos[c] for c in cells])
    return x[idx], genes, labels[idx]


def _rows_check(path: Path, cells: list[str], decades: float) -> tuple[int, int, list[str]]:
    """(rows that agree, rows, a few of the disagreements) of one marker table against the cells' own test."""
    rows = _table(path)
    x, genes, labels = _subset(cells)
    index = {g: j for j, g in enumerate(genes)}
    cache: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    ties = _ties(x)
    good, bad = 0, []
    for r in rows:
        g, gene = r.get("group", ""), r.get("gene", "")
        if g not in set(labels) or gene not in index:
            bad.append(f"{g}/{gene}: not a FACS population and gene of the data set")
            continue
        if g not in cache:
            cache[g] = {k: (p, _bh(p)) for k, p in _pvalues(x, labels == g, ties).items()}
        try:
            p_sub, adj_sub = float(r.get("pval", "nan")), float(r.get("pval_adj", "nan"))
        except ValueError:
            bad.append(f"{g}/{gene}: p-values are not numbers")
            continue
        j = index[gene]
        if any(_same(p_sub, p[j], decades) and _same(adj_sub, adj[j], decades) for p, adj in cache[g].values()):
            good += 1
        else:
            bad.append(f"{g}/{gene} (rank {r.get('rank')}): submitted p {p_sub:.3g}, adjusted {adj_sub:.3g}; "
                       f"recomputed {cache[g]['normal'][0][j]:.3g}, {cache[g]['normal'][1][j]:.3g}")
    return good, len(rows), bad


def wilcoxon_rows(evidence: Path, decades: float = 0.05) -> dict:
    """Every row of both replays' marker tables recomputed for the cells each replay was given."""
    lines, ok = [], True
    for name, out, inp in REPLAYS:
        path = evidence / out / "markers.csv"
        if not path.is_file():
            return {"score": 0.0, "rationale": f"{name} replay: no results/markers.csv to recompute"}
        try:
            cells = _inputs(evidence, inp)["cells"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            return {"score": 0.0, "rationale": f"{name} replay: no usable inputs.json ({inp}: {exc})"}
        good, n, bad = _rows_check(path, cells, decades)
        ok = ok and n > 0 and good == n
        lines.append(f"{name} replay ({len(cells)} cells): {good} of {n} rows agree"
                     + (f"; e.g. {'; '.join(bad[:3])}" if bad else ""))
    return {"score": float(ok),
            "rationale": f"every marker row of both replays recomputed from .raw of their cells (within {decades:g} "
                         "decades of scanpy's or SciPy's variant of the Wilcoxon test): " + ". ".join(lines),
            "refs": ["submission/results/markers.csv", "secret/submission/results/markers.csv"]}


def _leiden(cells: list[str], inputs: dict) -> np.ndarray:
    """The instruction's pinned procedure, for the replay's cells and parameters."""
    import pandas as pd
    import scanpy as sc

    x, genes, labels = _subset(cells)
    work = sc.AnnData(X=x.copy(), obs=pd.DataFrame({"bulk_labels": labels}, index=cells),
                      var=pd.DataFrame(index=genes))
    seed = inputs["seed"]
    sc.pp.scale(work, max_value=10)
    sc.tl.pca(work, n_comps=50, svd_solver="arpack", random_state=seed)
    sc.pp.neighbors(work, n_neighbors=inputs["n_neighbors"], n_pcs=inputs["n_pcs"], random_state=seed)
    sc.tl.leiden(work, resolution=inputs["resolution"], flavor="igraph", n_iterations=2, random_state=seed)
    return work.obs["leiden"].astype(str).to_numpy()


def clusters_replayed(evidence: Path, min_ari: float = 0.95) -> dict:
    """Each replay's clusters against the scorer's own run of the pinned procedure for that replay's inputs."""
    import os

    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba")
    from sklearn.metrics import adjusted_rand_score

    present = [(evidence / out / "clusters.csv").is_file() for _, out, _ in REPLAYS]
    if not any(present):
        return {"score": 1.0, "rationale": "no results/clusters.csv delivered by either replay: no clustering to "
                                           "compare (its absence is scored by other leaves)"}
    lines, ok = [], True
    for (name, out, inp), has in zip(REPLAYS, present, strict=True):
        if not has:
            return {"score": 0.0, "rationale": f"{name} replay: no results/clusters.csv (the other replay has one)"}
        try:
            inputs = _inputs(evidence, inp)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            return {"score": 0.0, "rationale": f"{name} replay: no usable inputs.json ({inp}: {exc})"}
        cells = inputs["cells"]
        rows = _table(evidence / out / "clusters.csv")
        by_cell = {r.get("cell", ""): r.get("cluster", "") for r in rows}
        if len(rows) != len(cells) or set(by_cell) != set(cells):
            return {"score": 0.0, "rationale": f"{name} replay: clusters.csv has {len(rows)} rows for {len(by_cell)} "
                                               f"distinct cells; its inputs.json lists {len(cells)} cells"}
        mine = _leiden(cells, inputs)
        theirs = np.array([by_cell[c] for c in cells], dtype=str)
        a = float(adjusted_rand_score(mine, theirs))
        _, _, labels = _subset(cells)
        ok = ok and a >= min_ari
        lines.append(f"{name} replay ({len(cells)} cells, {inputs['n_pcs']} PCs, {inputs['n_neighbors']} neighbours, "
                     f"resolution {inputs['resolution']:g}, seed {inputs['seed']}): the scorer's Leiden gives "
                     f"{len(set(mine))} clusters (ARI with the FACS labels {adjusted_rand_score(labels, mine):.3f}); "
                     f"the delivered {len(set(theirs))} clusters agree with it at ARI {a:.3f} (need >= {min_ari})")
    return {"score": float(ok), "rationale": "; ".join(lines),
            "refs": ["submission/results/clusters.csv", "secret/submission/results/clusters.csv"]}
