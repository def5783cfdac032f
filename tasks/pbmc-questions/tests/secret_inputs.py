"""Secret inputs of pbmc-questions (PRIVATE; the standard library only: the workbench runs ``draw`` in its
own process, and tests/checks.py imports ``truth`` from here).

The contract (instruction.md): ``inputs.json`` = ``{"cells": [obs names]}``; every answer and the Wilcoxon
table are for ``pbmc68k_reduced()[cells]``. The published file lists all 700 cells. The secret replay gets a
subsample stratified by population: each FACS population keeps a fraction drawn uniformly from [0.25, 1]
of its cells (at least 4, so every population stays testable), chosen at random. That is about 10^190
subsets; typed answers (or answers cached for the full data) cannot follow them: the cell count (oeq1)
and the phase counts (oeq3) change on every draw, the other answers on a measured share of draws
(TOLERANCES.md).

A draw is redrawn while a question's answer on it would be ambiguous or empty: a tie for the largest or
smallest population, median or mean, a multiple-choice question with no correct option, or the largest /
smallest population not among the options, so the scorer's truth (``truth``) is always well defined.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).parent
MIN_KEEP, LOW, HIGH = 4, 0.25, 1.0
_spec = importlib.util.spec_from_file_location("pbmc_questions_secret_truth", HERE / "refs" / "secret_truth.py")
truth_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(truth_module)
OBS, truth = truth_module.OBS, truth_module.truth


def draw(rng) -> dict:
    if (HERE / "refs" / "questions.json").read_bytes() != (HERE / "questions.json").read_bytes():
        raise RuntimeError("tests/refs/questions.json must be a copy of tests/questions.json (the checks read it)")
    pops: dict[str, list[str]] = {}
    for c, r in OBS.items():
        pops.setdefault(r["pop"], []).append(c)
    for _ in range(1000):
        keep: list[str] = []
        for p in sorted(pops):
            cells = pops[p]
            k = max(MIN_KEEP, round(rng.uniform(LOW, HIGH) * len(cells)))
            keep += rng.sample(cells, min(k, len(cells)))
        order = {c: i for i, c in enumerate(OBS)}  # the data set's own cell order
        keep.sort(key=order.__getitem__)
        if not truth(keep)["ambiguous"]:
            return {"cells": keep}
    raise RuntimeError("no unambiguous draw in 1000 tries")
