"""Spot recomputation for pbmc-markers (PRIVATE: run by the scorer in the task's scanpy environment, confined).

``wilcoxon_rows`` recomputes, from the data set's log-normalized expression (``.raw``), the one-group-
against-the-rest Wilcoxon rank-sum test for two rows of the submitted marker table: the rank-1 gene of a
group and one more row, both chosen by a hash of the table's bytes (the submission cannot know which of
its rows are checked without computing all of them). The submitted p-value and Benjamini-Hochberg
adjusted p-value (over all genes, as scanpy corrects) must match one of the usual variants of the test:
scanpy's normal approximation with or without tie correction, and SciPy's with a continuity correction.

``graph_communities`` asks whether the submitted clusters are a clustering of the expression data and not
the FACS labels: their adjusted Rand index with ``bulk_labels`` must be well below 1 (a graph clustering of
these 700 cells reaches about 0.5) and they must be communities of a k-nearest-neighbour graph the scorer
builds itself in PCA space (Newman modularity): Leiden or Louvain clusters of any sensible graph score
0.67-0.74 on it, the FACS labels 0.51, FACS labels with a third of the cells shuffled 0.27. A submission
that delivers no clustering passes (other leaves score its absence).

Runs without the workbench: NumPy, SciPy, scikit-learn, python-igraph and scanpy (for the data set).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from pathlib import Path

import numpy as np


def _table(path: Path) -> list[dict[str, str]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


def _data():
    import scanpy as sc

    shipped = sc.datasets.pbmc68k_reduced()
    x = shipped.raw.X
    x = np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)
    return x, list(shipped.raw.var_names), [str(c) for c in shipped.obs_names], \
        shipped.obs["bulk_labels"].astype(str).to_numpy()


def _pvalues(x: np.ndarray, in_group: np.ndarray) -> dict[str, np.ndarray]:
    """Two-sided p-values of every gene for one group against the rest, by variant."""
    from scipy.stats import norm, rankdata

    n = len(in_group)
    n1, n2 = int(in_group.sum()), int((~in_group).sum())
    ranks = rankdata(x, axis=0)
    rank_sum = ranks[in_group].sum(axis=0)
    mean = n1 * (n + 1) / 2.0
    sd = math.sqrt(n1 * n2 * (n + 1) / 12.0)
    ties = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        _, counts = np.unique(x[:, j], return_counts=True)
        ties[j] = (counts ** 3 - counts).sum()
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


def wilcoxon_rows(evidence: Path, decades: float = 0.05) -> dict:
    path = evidence / "submission" / "results" / "markers.csv"
    if not path.is_file():
        return {"score": 0.0, "rationale": "no results/markers.csv to recompute"}
    rows = _table(path)
    if not rows:
        return {"score": 0.0, "rationale": "results/markers.csv has no rows"}
    digest = hashlib.sha256(path.read_bytes()).digest()
    groups = sorted({r.get("group", "") for r in rows})
    group = groups[int.from_bytes(digest[:4], "big") % len(groups)]
    first = sorted((r for r in rows if r.get("group", "") == group), key=lambda r: float(r.get("rank") or "inf"))[0]
    others = [r for r in rows if r is not first]
    picked = [first] + ([others[int.from_bytes(digest[4:8], "big") % len(others)]] if others else [])

    x, genes, _, labels = _data()
    index = {g: j for j, g in enumerate(genes)}
    cache: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    lines, good = [], 0
    for r in picked:
        g, gene = r.get("group", ""), r.get("gene", "")
        if g not in set(labels) or gene not in index:
            lines.append(f"{g}/{gene}: not a FACS population and gene of the data set")
            continue
        if g not in cache:
            cache[g] = {k: (p, _bh(p)) for k, p in _pvalues(x, labels == g).items()}
        try:
            p_sub, adj_sub = float(r.get("pval", "nan")), float(r.get("pval_adj", "nan"))
        except ValueError:
            lines.append(f"{g}/{gene}: p-values are not numbers")
            continue
        j = index[gene]
        match = [k for k, (p, adj) in cache[g].items()
                 if _same(p_sub, p[j], decades) and _same(adj_sub, adj[j], decades)]
        ref_p, ref_adj = cache[g]["normal"][0][j], cache[g]["normal"][1][j]
        good += bool(match)
        lines.append(f"{g}/{gene} (rank {r.get('rank')}): submitted p {p_sub:.3g}, adjusted {adj_sub:.3g}; recomputed "
                     f"{ref_p:.3g}, {ref_adj:.3g} (scanpy's normal approximation) "
                     + (f"- matches the {match[0]} test" if match else "- MISMATCH with every variant"))
    return {"score": good / len(picked),
            "rationale": f"{good} of {len(picked)} marker rows recomputed from .raw agree "
                         f"(within {decades:g} decades): "
                         + "; ".join(lines), "refs": ["submission/results/markers.csv"]}


def _modularity(pcs: np.ndarray, labels: np.ndarray, k: int) -> float:
    import igraph as ig
    from sklearn.neighbors import NearestNeighbors

    _, idx = NearestNeighbors(n_neighbors=k + 1).fit(pcs).kneighbors(pcs)
    edges = {(min(i, int(j)), max(i, int(j))) for i in range(len(idx)) for j in idx[i, 1:] if i != j}
    _, codes = np.unique(labels, return_inverse=True)
    return float(ig.Graph(n=len(pcs), edges=sorted(edges)).modularity(codes.tolist()))


def graph_communities(evidence: Path, max_ari: float = 0.9, min_modularity: float = 0.6, n_pcs: int = 40,
                      k: int = 15) -> dict:
    path = evidence / "submission" / "results" / "clusters.csv"
    if not path.is_file():
        return {"score": 1.0, "rationale": "no results/clusters.csv delivered: no clustering to fingerprint "
                                           "(its absence is scored by other leaves)"}
    from sklearn.decomposition import PCA
    from sklearn.metrics import adjusted_rand_score

    rows = _table(path)
    x, _, cells, labels = _data()
    by_cell = {r.get("cell", ""): r.get("cluster", "") for r in rows}
    if len(rows) != len(cells) or set(by_cell) != set(cells):
        return {"score": 0.0, "rationale": f"clusters.csv has {len(rows)} rows for {len(by_cell)} distinct cells; the "
                                           f"data set has {len(cells)} cells"}
    clusters = np.array([by_cell[c] for c in cells], dtype=str)
    ari = float(adjusted_rand_score(labels, clusters))
    sd = x.std(axis=0)
    z = np.clip((x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0), None, 10.0)
    pcs = PCA(n_components=n_pcs, svd_solver="arpack", random_state=0).fit_transform(z)
    q = _modularity(pcs, clusters, k)
    q_facs = _modularity(pcs, labels, k)
    ok = ari < max_ari and q >= min_modularity
    return {"score": float(ok),
            "rationale": f"{len(set(clusters))} clusters: ARI with the FACS labels {ari:.3f} (must be < {max_ari}: a "
                         f"clustering, not the labels); modularity on the scorer's {k}-NN graph ({n_pcs} PCs of the "
                         f"scaled .raw expression) {q:.3f} (need >= {min_modularity}; "
                         f"the FACS labels give {q_facs:.3f})",
            "refs": ["submission/results/clusters.csv"]}
