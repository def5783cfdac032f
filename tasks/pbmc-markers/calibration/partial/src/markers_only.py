import json
import os

import pandas as pd
import scanpy as sc

print("scanpy", sc.__version__)
os.makedirs("results", exist_ok=True)
ad = sc.datasets.pbmc68k_reduced()[json.load(open("inputs.json"))["cells"]]  # the cells the contract lists
a = sc.AnnData(ad.raw.X.toarray(), obs=ad.obs[["bulk_labels"]].copy(), var=pd.DataFrame(index=ad.raw.var_names))
sc.tl.rank_genes_groups(a, "bulk_labels", method="wilcoxon", use_raw=False, n_genes=30)
df = sc.get.rank_genes_groups_df(a, group=None)
df = df.rename(columns={"names": "gene", "scores": "score", "logfoldchanges": "logfoldchange", "pvals": "pval",
                        "pvals_adj": "pval_adj"})
df["rank"] = df.groupby("group", observed=True).cumcount() + 1
df[["group", "rank", "gene", "score", "logfoldchange", "pval", "pval_adj"]].to_csv("results/markers.csv", index=False)
