"""Secret inputs of pbmc-markers (PRIVATE; the standard library only: the workbench runs ``draw`` in its own
process).

The contract (instruction.md): ``inputs.json`` = ``{"cells": [obs names], "n_pcs", "n_neighbors",
"resolution", "seed"}``; the marker table is for ``pbmc68k_reduced()[cells]`` and the clusters are the
instruction's pinned Leiden procedure with those parameters. The published file lists all 700 cells with
n_pcs 40, n_neighbors 15, resolution 1.0, seed 0. The secret replay gets a subsample stratified by population
(each FACS population keeps a fraction drawn uniformly from [0.5, 1] of its cells, at least 5, at random),
n_pcs from 20-50, n_neighbors from 10-30, a resolution from [0.5, 1.5] (three decimals) and a seed from
0-999999: about 10^150 cell sets times 3*10^11 parameter sets. Neither cached tables nor the data set's own
labels (lightly edited or not) follow them: tests/recompute.py recomputes every marker row and re-runs the
clustering for the drawn values.
"""

from __future__ import annotations

import json
from pathlib import Path

SHIPPED = json.loads((Path(__file__).parent / "refs" / "shipped.json").read_text())
MIN_KEEP, LOW, HIGH = 5, 0.5, 1.0


def draw(rng) -> dict:
    labels = SHIPPED["bulk_labels"]  # cell -> FACS population, in the data set's order
    pops: dict[str, list[str]] = {}
    for c, p in labels.items():
        pops.setdefault(p, []).append(c)
    keep: set[str] = set()
    for p in sorted(pops):
        k = max(MIN_KEEP, round(rng.uniform(LOW, HIGH) * len(pops[p])))
        keep.update(rng.sample(pops[p], min(k, len(pops[p]))))
    return {"cells": [c for c in labels if c in keep], "n_pcs": rng.randint(20, 50),
            "n_neighbors": rng.randint(10, 30), "resolution": round(rng.uniform(0.5, 1.5), 3),
            "seed": rng.randint(0, 999_999)}
