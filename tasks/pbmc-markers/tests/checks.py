"""Task checks for pbmc-markers (PRIVATE). The data set ships a logistic-regression marker ranking of
the same FACS groups and a Louvain clustering (tests/refs/shipped.json, generated from the installable
scanpy package): copying them is the cached-results failure, so both validation groups are gated on
the results having been computed in the replay. The Wilcoxon test is verified from its own numbers here,
and recomputed row by row from the data by tests/recompute.py for both replays (a root gate, with the
scorer's own re-run of the pinned clustering for each replay's inputs); ``cpu_for_claims`` asks the
replay's receipts whether the analysis that wrote the tables spent the CPU time the delivered results cost."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from workbench.evidence import MissingEvidence
from workbench.scoring import CheckOutcome, task_check
from workbench.scoring.receipt_checks import receipts_of

SHIPPED = json.loads((Path(__file__).parent / "refs" / "shipped.json").read_text())
FACS = sorted(set(SHIPPED["bulk_labels"].values()))
LINEAGE = {"CD19+ B": "B", "CD56+ NK": "NK", "CD14+ Monocyte": "monocyte", "Dendritic": "dendritic",
           "CD34+": "progenitor"}


def _result(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(float(bool(ok)), ("pass: " if ok else "fail: ") + text, refs)


def _markers(ev):
    df = ev.read_csv("results/markers.csv")
    need = ("group", "rank", "gene", "score", "pval", "pval_adj")
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise MissingEvidence(f"submission/results/markers.csv:{','.join(missing)}", "columns not found")
    return df


def _clusters(ev):
    df = ev.read_csv("results/clusters.csv")
    for c in ("cell", "cluster", "annotation", "bulk_label"):
        if c not in df.columns:
            raise MissingEvidence(f"submission/results/clusters.csv:{c}", "column not found")
    return df


def ari(a, b) -> float:
    """Adjusted Rand index (Hubert & Arabie) from the contingency table."""
    _, ai = np.unique(np.asarray(a, dtype=str), return_inverse=True)
    _, bi = np.unique(np.asarray(b, dtype=str), return_inverse=True)
    table = np.zeros((ai.max() + 1, bi.max() + 1))
    np.add.at(table, (ai, bi), 1)

    def comb2(x):
        return (x * (x - 1) / 2).sum()

    n = len(ai)
    index, rows, cols = comb2(table), comb2(table.sum(1)), comb2(table.sum(0))
    expected = rows * cols / (n * (n - 1) / 2)
    maximum = (rows + cols) / 2
    return float((index - expected) / (maximum - expected)) if maximum != expected else 1.0


def _lineage_of_annotation(text: str) -> str:
    t = str(text).lower()
    for key, lin in (("nk", "NK"), ("mono", "monocyte"), ("dendritic", "dendritic"), ("dc", "dendritic"),
                     ("b cell", "B"), ("b-cell", "B"), ("t cell", "T"), ("t-cell", "T"), ("progenitor", "progenitor"),
                     ("cd34", "progenitor")):
        if key in t:
            return lin
    return "other"


@task_check
def facs_groups(ev) -> CheckOutcome:
    groups = sorted(_markers(ev)["group"].astype(str).unique())
    return _result(groups == FACS, f"{len(groups)} marker groups; FACS populations {len(FACS)}",
                   ["submission/results/markers.csv"])


@task_check
def wilcoxon_pvalues(ev, max_decades: float = 0.05) -> CheckOutcome:
    """A Wilcoxon (normal approximation) test: p = erfc(|z| / sqrt 2) for its z-score."""
    df = _markers(ev)
    z, p = df["score"].to_numpy(float), df["pval"].to_numpy(float)
    expected = np.array([math.erfc(abs(x) / math.sqrt(2)) for x in z])
    ok_rows = [(e < 1e-300 or pp == 0) or abs(math.log10(max(pp, 1e-320)) - math.log10(e)) <= max_decades
               for e, pp in zip(expected, p, strict=True)]
    frac = float(np.mean(ok_rows)) if len(ok_rows) else 0.0
    return _result(frac >= 0.99, f"{100 * frac:.1f} % of rows have p = erfc(|z|/sqrt2)",
                   ["submission/results/markers.csv"])


@task_check
def adjusted_pvalues(ev) -> CheckOutcome:
    df = _markers(ev)
    bad = 0
    for _, g in df.groupby("group"):
        g = g.sort_values("pval")
        adj, raw = g["pval_adj"].to_numpy(float), g["pval"].to_numpy(float)
        bad += int((adj < raw * (1 - 1e-6)).sum() + (adj > 1 + 1e-9).sum() + (np.diff(adj) < -1e-12 * adj[1:]).sum())
    return _result(bad == 0, f"{bad} rows violate adj >= p, adj <= 1 or monotonicity",
                   ["submission/results/markers.csv"])


@task_check
def clustering_declared(ev) -> CheckOutcome:
    s = ev.read_json("results/summary.json")
    inputs = ev.read_json("replay/input/inputs.json")
    ok = str(s.get("clustering", "")).lower() == "leiden" and \
        all(isinstance(s.get(k), int | float) and s.get(k) == inputs.get(k) for k in ("n_pcs", "n_neighbors"))
    text = f"clustering {s.get('clustering')!r}, n_pcs {s.get('n_pcs')}, n_neighbors {s.get('n_neighbors')}"
    return _result(ok, text + " (inputs.json's)", ["submission/results/summary.json", "replay/input/inputs.json"])


@task_check
def clusters_table(ev) -> CheckOutcome:
    df = _clusters(ev)
    labels = dict(zip(df["cell"].astype(str), df["bulk_label"].astype(str), strict=True))
    ok = len(df) == len(SHIPPED["bulk_labels"]) and labels == SHIPPED["bulk_labels"]
    return _result(ok, f"{len(df)} cells; FACS labels as shipped: {labels == SHIPPED['bulk_labels']}",
                   ["submission/results/clusters.csv"])


@task_check
def markers_table(ev, min_genes: int = 25) -> CheckOutcome:
    df = _markers(ev)
    problems = []
    for g, sub in df.groupby("group"):
        sub = sub.sort_values("rank")
        if len(sub) < min_genes or list(sub["rank"]) != list(range(1, len(sub) + 1)) or \
                (np.diff(sub["score"].to_numpy(float)) > 1e-6).any():
            problems.append(str(g))
    return _result(not problems, f"groups with too few, unranked or unsorted genes: {problems}" if problems else
                   f">= {min_genes} ranked genes per group", ["submission/results/markers.csv"])


@task_check
def not_copied(ev, tol: float = 1e-4) -> CheckOutcome:
    """Gate: the marker scores are not the data set's shipped logistic-regression scores."""
    df = _markers(ev)
    shipped = {(g, n): s for g, d in SHIPPED["rank_genes_groups"]["groups"].items()
               for n, s in zip(d["names"], d["scores"], strict=True)}
    same = sum(1 for g, n, s in zip(df["group"], df["gene"], df["score"], strict=True)
               if (str(g), str(n)) in shipped and abs(shipped[(str(g), str(n))] - float(s)) <= tol)
    return _result(same <= 2, f"{same} of {len(df)} (group, gene, score) rows equal the shipped "
                   f"{SHIPPED['rank_genes_groups']['method']} ranking", ["submission/results/markers.csv"])


@task_check
def canonical(ev, group: str, genes: list[str], top: int) -> CheckOutcome:
    df = _markers(ev)
    sub = df[df["group"].astype(str) == group].sort_values("rank")
    ranks = {g: int(r) for g, r in zip(sub["gene"], sub["rank"], strict=True)}
    found = {g: ranks.get(g) for g in genes}
    ok = all(r is not None and r <= top for r in found.values())
    return _result(ok, f"{group}: ranks {found} (need <= {top})", ["submission/results/markers.csv"])


@task_check
def canonical_significant(ev, sets: dict[str, list[str]], alpha: float = 0.01) -> CheckOutcome:
    df = _markers(ev)
    worst = {}
    for group, genes in sets.items():
        sub = df[df["group"].astype(str) == group].set_index("gene")
        for g in genes:
            worst[f"{group}:{g}"] = float(sub.loc[g, "pval_adj"]) if g in sub.index else 1.0
    bad = {k: v for k, v in worst.items() if v >= alpha}
    return _result(not bad, f"adjusted p >= {alpha}: {bad}" if bad else f"all {len(worst)} canonical markers < {alpha}",
                   ["submission/results/markers.csv"])


@task_check
def recomputed_clusters(ev, max_ari: float = 0.95) -> CheckOutcome:
    """Gate: the clusters are not the data set's shipped Louvain labels."""
    df = _clusters(ev)
    shipped = [SHIPPED["louvain"].get(str(c), "?") for c in df["cell"]]
    a = ari(df["cluster"], shipped)
    return _result(a < max_ari, f"ARI with the shipped Louvain labels {a:.3f}", ["submission/results/clusters.csv"])


@task_check
def ari_vs_facs(ev, minimum: float = 0.35) -> CheckOutcome:
    df = _clusters(ev)
    a = ari(df["cluster"], df["bulk_label"])
    return _result(a >= minimum, f"ARI(clusters, FACS labels) = {a:.3f} (>= {minimum})",
                   ["submission/results/clusters.csv"])


@task_check
def lineage_agreement(ev, minimum: float = 0.6) -> CheckOutcome:
    """Share of cells whose cluster annotation names their FACS lineage (all CD4/CD8 populations are T)."""
    df = _clusters(ev)
    per = df.groupby(df["cluster"].astype(str))["annotation"].nunique()
    mixed = sorted(per.index[per > 1])
    if mixed:  # a cell type per cluster, from its markers: not per cell (which could copy the FACS labels)
        return _result(False, f"clusters {mixed[:5]} carry more than one annotation",
                       ["submission/results/clusters.csv"])
    truth = [LINEAGE.get(str(b), "T") for b in df["bulk_label"]]
    got = [_lineage_of_annotation(a) for a in df["annotation"]]
    frac = float(np.mean([t == g for t, g in zip(truth, got, strict=True)]))
    return _result(frac >= minimum, f"{100 * frac:.1f} % of cells annotated with their FACS lineage",
                   ["submission/results/clusters.csv"])


@task_check
def paper_markers(ev, sets: dict[str, dict[str, int]]) -> CheckOutcome:
    """Zheng et al.'s own Figure 3 markers that this subsample supports: {group: {gene: top}}."""
    df = _markers(ev)
    found, bad = {}, []
    for group, genes in sets.items():
        sub = df[df["group"].astype(str) == group]
        ranks = {str(g): int(r) for g, r in zip(sub["gene"], sub["rank"], strict=True)}
        for gene, top in genes.items():
            r = ranks.get(gene)
            found[f"{group}:{gene}"] = r
            if r is None or r > top:
                bad.append(f"{group}:{gene} rank {r} (need <= {top})")
    return _result(not bad, "; ".join(bad) if bad else f"ranks {found}", ["submission/results/markers.csv"])


# CPU seconds (one core, fresh numba cache) that the delivered results cost at the least: a Wilcoxon table
# by SciPy or scanpy, and a kNN graph + Leiden + UMAP (numba compiles pynndescent and UMAP on first use).
CLAIM_CPU_SEC = {"results/markers.csv": 2.0, "results/clusters.csv": 20.0}


@task_check
def cpu_for_claims(ev, package: str = "scanpy", fraction: float = 0.4, overhead_sec: float = 2.0) -> CheckOutcome:
    """The processes that loaded scanpy spent at least ``overhead_sec`` (importing scanpy) plus ``fraction``
    of what the delivered tables cost to compute: a cached table written out by a token script is not."""
    claimed = {p: c for p, c in CLAIM_CPU_SEC.items() if ev.exists(p)}
    if not claimed:
        raise MissingEvidence("submission/results/markers.csv", "no results to account for")
    need = overhead_sec + fraction * sum(claimed.values())
    cpu = sum(p.cpu_sec for p in receipts_of(ev).loaders_of(package))
    ok = cpu >= need
    # a pass does not quote the measured CPU time, so two replays of the same work score identically
    used = f"at least the {need:.1f} CPU s needed" if ok else f"{cpu:.2f} CPU s, less than the {need:.1f} needed"
    return _result(ok, f"processes that loaded {package} used {used} for {sorted(claimed)} "
                       f"({overhead_sec:g} s of imports + {fraction:g} of {sum(claimed.values()):g} s)",
                   ["replay/receipts.json", *(f"submission/{p}" for p in claimed)])
