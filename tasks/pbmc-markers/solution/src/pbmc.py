"""Reference workflow: Wilcoxon markers of the FACS populations and Leiden clusters annotated by the
canonical markers of Zheng et al. (2017), on scanpy's bundled pbmc68k_reduced subsample."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import scanpy as sc
from sklearn.metrics import adjusted_rand_score

matplotlib.use("Agg")

OUT = Path("results")
CANONICAL = {
    "B cell": ["CD79A", "CD79B", "MS4A1"],
    "NK cell": ["NKG7", "GNLY"],
    "CD14+ monocyte": ["FTL", "AIF1", "LST1", "TYROBP"],
    "dendritic cell": ["LYZ", "CST3", "HLA-DRA"],
    "T cell": ["CD3D", "CD3E"],
    "cytotoxic T cell": ["CCL5", "NKG7", "GZMA", "CD3D"],
}


def fresh_anndata(cells: list[str]) -> sc.AnnData:
    """Only the log-normalized expression and the FACS labels of the given cells: nothing precomputed comes along."""
    shipped = sc.datasets.pbmc68k_reduced()[cells]
    x = shipped.raw.X
    x = np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)
    return sc.AnnData(X=x, obs=shipped.obs[["bulk_labels"]].copy(),
                      var=pd.DataFrame(index=shipped.raw.var_names.copy()))


def markers(adata: sc.AnnData) -> pd.DataFrame:
    sc.tl.rank_genes_groups(adata, "bulk_labels", method="wilcoxon", corr_method="benjamini-hochberg",
                            use_raw=False, n_genes=50)
    df = sc.get.rank_genes_groups_df(adata, group=None).rename(
        columns={"names": "gene", "scores": "score", "logfoldchanges": "logfoldchange", "pvals": "pval",
                 "pvals_adj": "pval_adj"})
    df["rank"] = df.groupby("group", observed=True).cumcount() + 1
    return df[["group", "rank", "gene", "score", "logfoldchange", "pval", "pval_adj"]]


def cluster(adata: sc.AnnData, params: dict) -> sc.AnnData:
    work = adata.copy()
    sc.pp.scale(work, max_value=10)
    sc.tl.pca(work, n_comps=50, svd_solver="arpack", random_state=params["seed"])
    sc.pp.neighbors(work, n_neighbors=params["n_neighbors"], n_pcs=params["n_pcs"], random_state=params["seed"])
    sc.tl.leiden(work, resolution=params["resolution"], flavor="igraph", n_iterations=2, random_state=params["seed"])
    sc.tl.umap(work, random_state=params["seed"])
    return work


def annotate(adata: sc.AnnData, clusters: pd.Series) -> dict[str, str]:
    """Each cluster gets the cell type whose canonical markers it expresses most (mean z-score)."""
    expr = pd.DataFrame(adata.X, index=adata.obs_names, columns=adata.var_names)
    z = (expr - expr.mean()) / expr.std(ddof=0).replace(0, 1)
    names = {}
    for c in sorted(clusters.unique(), key=int):
        cells = clusters.index[clusters == c]
        scores = {t: float(z.loc[cells, g].mean().mean()) for t, g in CANONICAL.items()}
        names[c] = max(scores, key=scores.get)
    return names


def main() -> None:
    OUT.mkdir(exist_ok=True)
    print(f"scanpy {sc.__version__}", flush=True)
    sc.settings.verbosity = 1
    # the contract's inputs.json: the cells and the clustering parameters (the published file: all 700 cells,
    # 40 PCs, 15 neighbours, resolution 1, seed 0; the verifier's second replay draws its own)
    inputs = json.loads(Path("inputs.json").read_text())
    params = {k: inputs[k] for k in ("n_pcs", "n_neighbors", "resolution", "seed")}
    adata = fresh_anndata(inputs["cells"])
    table = markers(adata)
    table.to_csv(OUT / "markers.csv", index=False)
    for g, sub in table.groupby("group", observed=True):
        print(f"{g:30s} {sub.gene.head(8).tolist()}", flush=True)

    work = cluster(adata, params)
    clusters = work.obs["leiden"].astype(str)
    names = annotate(adata, clusters)
    pd.DataFrame({"cell": work.obs_names, "cluster": clusters.values,
                  "annotation": [names[c] for c in clusters], "bulk_label": work.obs["bulk_labels"].values}
                 ).to_csv(OUT / "clusters.csv", index=False)
    ari = adjusted_rand_score(work.obs["bulk_labels"], clusters)
    summary = {"marker_test": "wilcoxon", "p_adjust": "benjamini-hochberg", "clustering": "leiden", **params,
               "n_clusters": int(clusters.nunique()), "ari_vs_bulk_labels": ari,
               "cluster_annotation": names}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"{summary['n_clusters']} Leiden clusters, ARI vs FACS labels {ari:.3f}; {names}", flush=True)

    work.obs["annotation"] = [names[c] for c in clusters]
    sc.settings.figdir = OUT
    import matplotlib.pyplot as plt

    fig = sc.pl.umap(work, color=["leiden", "annotation", "bulk_labels"], show=False, return_fig=True)
    fig.savefig(OUT / "umap.png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    genes = list(dict.fromkeys(g for gs in CANONICAL.values() for g in gs))
    dot = sc.pl.dotplot(adata, genes, groupby="bulk_labels", show=False, return_fig=True)
    dot.savefig(OUT / "dotplot.png", dpi=80, bbox_inches="tight")


if __name__ == "__main__":
    main()
