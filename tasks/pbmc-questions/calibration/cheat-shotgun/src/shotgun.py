"""Every candidate for every question, written by a process that did run the analysis."""

import json
from pathlib import Path

import scanpy as sc

adata = sc.datasets.pbmc68k_reduced()
sc.tl.rank_genes_groups(adata, "bulk_labels", method="wilcoxon", use_raw=True)
out = Path("results")
out.mkdir(exist_ok=True)
sc.get.rank_genes_groups_df(adata, group=None).to_csv(out / "markers.csv", index=False)

ints = ", ".join(str(i) for i in range(1001))
pcts = ", ".join(f"{i / 10:.1f}%" for i in range(1001))
rs = ", ".join(f"{i / 100:.2f}" for i in range(101))
pops = ", ".join(sorted(map(str, adata.obs["bulk_labels"].cat.categories)))
genes = ", ".join(map(str, adata.raw.var_names))
letters = {"mcq1": "ABCD", "mcq2": "ABCDE", "mcq3": "ABCD", "mcq4": "ABCDE", "mcq5": "ABCD", "mcq6": "ABCD"}
answers = {q: list(v) for q, v in letters.items()}
answers["oeq1"] = f"cells, genes and FACS populations: one of {ints}; ten populations."
answers["oeq2"] = f"The smallest is one of {pops}, with one of {ints} cells; eight cells."
answers["oeq3"] = f"Cells per phase (G1, S, G2M): {ints} cells; {pcts}."
answers["oeq4"] = f"The top 5 markers are among {genes}."
answers["oeq5"] = f"n_counts and n_genes are positively correlated, more counts more genes; Pearson r in {rs}."
(out / "answers.json").write_text(json.dumps(answers))
