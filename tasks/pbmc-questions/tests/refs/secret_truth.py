"""The scorer's answers of pbmc-questions for any set of cells (PRIVATE; the standard library only).

Shared by tests/secret_inputs.py (the draw redraws a cell set on which an answer is ambiguous) and
tests/checks.py (gate G7). It lives in tests/refs/ because that folder is all the confined checks see
besides checks.py; refs/questions.json is a copy of tests/questions.json that secret_inputs.py keeps
identical (a draw fails if the two differ).
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

HERE = Path(__file__).parent


def _obs() -> dict[str, dict]:
    with (HERE / "obs.csv").open(newline="") as fh:
        return {r["cell"]: {"pop": r["bulk_labels"], "phase": r["phase"], "n_genes": int(r["n_genes"]),
                            "n_counts": float(r["n_counts"]), "S": float(r["S_score"]), "louvain": r["louvain"]}
                for r in csv.DictReader(fh)}


OBS = _obs()
QUESTIONS = {q["id"]: q for q in json.loads((HERE / "questions.json").read_text())["questions"]}


def _options(qid: str) -> dict[str, str]:
    return QUESTIONS[qid]["options"]


def _argmax(values: dict[str, float], rel: float = 0.0) -> str | None:
    """The key of the largest value, or None on a tie (within ``rel`` relative)."""
    ranked = sorted(values.items(), key=lambda kv: kv[1], reverse=True)
    if len(ranked) > 1 and abs(ranked[0][1] - ranked[1][1]) <= rel * max(abs(ranked[0][1]), 1e-12):
        return None
    return ranked[0][0]


def truth(cells: list[str]) -> dict:
    """The scorer's answers for ``pbmc68k_reduced()[cells]`` of every question the obs table answers (all but
    the Wilcoxon questions mcq4 and oeq4, whose truth is the verified table), plus ``ambiguous``: the
    questions whose answer is not well defined on these cells (a draw is redrawn then)."""
    rows = [OBS[c] for c in cells]
    pops = sorted({r["pop"] for r in rows})
    by_pop = {p: [r for r in rows if r["pop"] == p] for p in pops}
    counts = {p: len(v) for p, v in by_pop.items()}
    amb: list[str] = []
    out: dict = {}

    def letters(qid: str, names: set[str]) -> list[str]:
        got = sorted(k for k, v in _options(qid).items() if v in names)
        if not got:
            amb.append(qid)
        return got

    top = _argmax(counts)
    amb += [] if top else ["mcq1"]
    out["mcq1"] = letters("mcq1", {top})
    phase = {p: {ph: sum(r["phase"] == ph for r in v) for ph in ("G1", "S", "G2M")} for p, v in by_pop.items()}
    out["mcq2"] = letters("mcq2", {p for p, c in phase.items() if c["S"] > c["G1"]})
    med = _argmax({p: statistics.median(r["n_genes"] for r in v) for p, v in by_pop.items()})
    amb += [] if med else ["mcq3"]
    out["mcq3"] = letters("mcq3", {med})
    mean_s = _argmax({p: math.fsum(r["S"] for r in v) / len(v) for p, v in by_pop.items()}, rel=1e-4)
    amb += [] if mean_s else ["mcq5"]
    out["mcq5"] = letters("mcq5", {mean_s})
    b = {}
    for r in by_pop.get("CD19+ B", []):
        b[r["louvain"]] = b.get(r["louvain"], 0) + 1
    out["mcq6"] = letters("mcq6", {k for k, n in b.items() if n > 20})

    n = len(rows)
    out["n_cells"], out["n_pops"] = n, len(pops)
    low = sorted(counts.items(), key=lambda kv: kv[1])
    if len(low) > 1 and low[0][1] == low[1][1]:
        amb.append("oeq2")
    out["smallest"], out["smallest_n"] = low[0]
    ph = {x: sum(r["phase"] == x for r in rows) for x in ("G1", "S", "G2M")}
    amb += ["oeq3"] if min(ph.values()) == 0 else []
    out["phase"] = {x: (c, 100.0 * c / n) for x, c in ph.items()}
    xs, ys = [r["n_counts"] for r in rows], [float(r["n_genes"]) for r in rows]
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    sxy = math.fsum((a - mx) * (c - my) for a, c in zip(xs, ys, strict=True))
    sxx, syy = math.fsum((a - mx) ** 2 for a in xs), math.fsum((c - my) ** 2 for c in ys)
    out["r"] = sxy / math.sqrt(sxx * syy)
    out["ambiguous"] = sorted(set(amb))
    return out
