"""Answer the task's questions from scanpy's pbmc68k_reduced; tables of the analysis beside the answers
(results/markers.csv: the full Wilcoxon ranking the contract asks to keep)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import scanpy as sc

out = Path("results")
out.mkdir(exist_ok=True)
# the cells the contract's inputs.json lists (all 700 in the published file; a subsample in the verifier's
# second replay): every answer below is for them
cells = json.loads(Path("inputs.json").read_text())["cells"]
adata = sc.datasets.pbmc68k_reduced()[cells].copy()
obs = adata.obs
pop = obs["bulk_labels"]


def pick(options: dict[str, str], true: set[str]) -> list[str]:
    return sorted(letter for letter, name in options.items() if name in true)


counts = pop.value_counts()
phase = pd.crosstab(pop, obs["phase"])
median_genes = obs.groupby("bulk_labels", observed=True)["n_genes"].median()
mean_s = obs.groupby("bulk_labels", observed=True)["S_score"].mean()
b_by_cluster = pd.crosstab(obs["louvain"], pop)["CD19+ B"]
sc.tl.rank_genes_groups(adata, "bulk_labels", method="wilcoxon", use_raw=True)
markers = {g: [str(x) for x in adata.uns["rank_genes_groups"]["names"][g][:10]] for g in counts.index}
r = float(np.corrcoef(obs["n_counts"], obs["n_genes"])[0, 1])

answers = {
    "mcq1": pick({"A": "Dendritic", "B": "CD14+ Monocyte", "C": "CD19+ B", "D": "CD4+/CD25 T Reg"}, {counts.idxmax()}),
    "mcq2": pick({"A": "CD34+", "B": "CD56+ NK", "C": "CD4+/CD45RO+ Memory", "D": "CD19+ B", "E": "Dendritic"},
                 set(phase.index[phase["S"] > phase["G1"]])),
    "mcq3": pick({"A": "CD34+", "B": "Dendritic", "C": "CD14+ Monocyte", "D": "CD4+/CD45RO+ Memory"},
                 {median_genes.idxmax()}),
    "mcq4": pick({"A": "NKG7", "B": "GNLY", "C": "LYZ", "D": "CD79A", "E": "GZMB"}, set(markers["CD56+ NK"][:5])),
    "mcq5": pick({"A": "CD56+ NK", "B": "CD34+", "C": "CD8+ Cytotoxic T", "D": "CD14+ Monocyte"}, {mean_s.idxmax()}),
    "mcq6": pick({"A": "0", "B": "4", "C": "8", "D": "9"}, set(b_by_cluster.index[b_by_cluster > 20])),
}
n_phase = obs["phase"].value_counts()
answers["oeq1"] = (f"{adata.n_obs} cells, {adata.n_vars} genes and {pop.nunique()} FACS populations "
                   f"(bulk_labels).")
answers["oeq2"] = f"{counts.idxmin()} is the smallest population with {counts.min()} cells."
answers["oeq3"] = "; ".join(f"{p}: {n_phase[p]} cells ({100 * n_phase[p] / adata.n_obs:.1f}%)"
                            for p in ("G1", "S", "G2M"))
answers["oeq4"] = "Top 5 Wilcoxon markers of CD19+ B cells, in rank order: " + ", ".join(markers["CD19+ B"][:5])
answers["oeq5"] = (f"A strong positive, near-linear relation: cells with more counts have more detected genes; "
                   f"Pearson r = {r:.3f} over {adata.n_obs} cells.")

(out / "answers.json").write_text(json.dumps(answers, indent=2))
pd.DataFrame({"cells": counts, "median_n_genes": median_genes, "mean_S_score": mean_s}).to_csv(out / "populations.csv")
phase.to_csv(out / "phase_by_population.csv")
# the full Wilcoxon table (every population x every gene), unrounded: the analysis behind mcq4 and oeq4
sc.get.rank_genes_groups_df(adata, group=None).to_csv(out / "markers.csv", index=False)
print(json.dumps(answers, indent=2))
