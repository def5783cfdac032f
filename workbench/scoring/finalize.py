"""The finaliser: machine results -> valid reviews -> gates -> exact aggregate. The only R in the code.

Every scores.json is made here, whether a trial was just scored or an expert just saved a review, in
this order:

1. **Machine results**: each leaf as its check or the judge left it (:mod:`.leaves`).
2. **Valid reviews**: a review counts only for the evidence it judged (the trial's evidence manifest
   digest and the leaf's evidence digest when it was recorded); a review of other evidence, such as a
   re-run of the same trial id, is *stale*: counted and shown, never applied. A leaf's decision is
   **adjudication > agreeing reviewers > machine** (:func:`decide`).
3. **Gates**: a gate leaf whose score is anything but exactly 1 (0, 0.5, pending, withheld,
   disputed) zeroes every leaf under its parent's other children (sibling subtrees, not only sibling
   leaves). Gated leaves keep their machine result and review, so a later decision restores them.
4. **Aggregate**, exactly: effective weights are fractions of the weights as written and scores are
   taken as written (0.1 is 1/10), so ``full = R > 9/10`` holds or fails exactly. ``R`` counts
   uncounted leaves (pending, withheld, disputed) as 0; ``R_upper`` re-runs the gates with every
   uncounted leaf at 1, so it is the best the trial can still reach.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..rubric import PHASES, exact, is_full
from .results import COUNTED, LeafScore

CONTINUOUS_AGREEMENT = Fraction(1, 4)  # two continuous reviews agree when within 0.25 of each other
KINDS = ("review", "adjudication")


def verdict(score: float) -> int:
    """A score as a binary verdict (met at 0.5 or more): how reviewers and judges are compared."""
    return 1 if score >= 0.5 else 0


@dataclass(frozen=True)
class ReviewRecord:
    """One stored review (see :mod:`workbench.store`), as the finaliser needs it."""

    review_id: int
    leaf_id: str
    kind: str
    reviewer: str
    score: float
    comment: str = ""
    evidence_digest: str | None = None  # the trial's evidence manifest digest when it was recorded
    leaf_evidence: str | None = None  # the leaf's evidence digest when it was recorded

    @classmethod
    def from_frame(cls, frame) -> list[ReviewRecord]:
        """Records from ``Store.reviews_for`` (a DataFrame, oldest first)."""
        if frame is None or len(frame) == 0:
            return []

        def text(v: Any) -> str | None:
            return None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)

        cols = set(frame.columns)
        return [cls(review_id=int(r["review_id"]), leaf_id=str(r["leaf_id"]), kind=str(r["kind"]),
                    reviewer=str(r["reviewer"]), score=float(r["score"]), comment=text(r.get("comment")) or "",
                    evidence_digest=text(r["evidence_digest"]) if "evidence_digest" in cols else None,
                    leaf_evidence=text(r["leaf_evidence"]) if "leaf_evidence" in cols else None)
                for r in frame.to_dict("records")]

    def judged(self, evidence_digest: str | None, leaf_evidence: str | None) -> bool:
        """Whether this record judged exactly this evidence (a record made before binding never did)."""
        return (self.evidence_digest is not None and self.evidence_digest == evidence_digest
                and self.leaf_evidence == leaf_evidence)


def decide(records: list[ReviewRecord], required: int, scale: str = "binary") -> dict[str, Any] | None:
    """The expert decision for one leaf from its valid records (oldest first), or None.

    The latest adjudication decides; else, once ``required`` reviewers have reviewed, their latest scores
    decide if they agree (binary: the same verdict; continuous: also within 0.25), as their mean; if they
    disagree the leaf is ``disputed`` (no score, outside R) until someone adjudicates."""
    adjudications = [r for r in records if r.kind == "adjudication"]
    if adjudications:
        last = adjudications[-1]
        return {"score": last.score, "status": "adjudicated", "reviewers": [last.reviewer],
                "rationale": f"adjudicated by {last.reviewer}" + (f": {last.comment}" if last.comment else "")}
    latest: dict[str, ReviewRecord] = {}
    for r in records:
        if r.kind == "review":
            latest.pop(r.reviewer, None)
            latest[r.reviewer] = r  # re-inserted: reviewers ordered by their latest review
    if not latest or len(latest) < required:
        return None
    who = list(latest)
    scores = [exact(latest[w].score) for w in who]
    agree = len({verdict(s) for s in scores}) == 1 and (scale == "binary"
                                                        or max(scores) - min(scores) <= CONTINUOUS_AGREEMENT)
    if not agree:
        return {"score": None, "status": "disputed", "reviewers": who,
                "rationale": "reviewers disagree (" + ", ".join(f"{w}: {latest[w].score:g}" for w in who)
                             + "); awaiting adjudication"}
    comments = "; ".join(f"{w}: {latest[w].comment}" for w in who if latest[w].comment)
    return {"score": float(sum(scores) / len(scores)), "status": "reviewed", "reviewers": who,
            "rationale": f"reviewed by {', '.join(who)}" + (f" ({comments})" if comments else "")}


def machine_result(lf: LeafScore) -> LeafScore:
    """The leaf as its check or the judge left it: reviews and gates undone."""
    update: dict[str, Any] = {"machine": None, "review": None, "gated_by": []}
    if lf.machine:
        update.update(lf.machine)
    return lf.model_copy(update=update)


def _weight(lf: LeafScore) -> Fraction:
    return Fraction(lf.weight) if lf.weight else exact(lf.effective_weight)


def _values(leaves: list[LeafScore], upper: bool) -> dict[str, Fraction | None]:
    """Each leaf's score before gates (None: not counted); ``upper`` counts uncounted leaves as 1."""
    return {lf.id: (exact(lf.score) if lf.status in COUNTED and lf.score is not None
                    else (Fraction(1) if upper else None)) for lf in leaves}


def _gates(leaves: list[LeafScore], values: dict[str, Fraction | None]) -> dict[str, list[str]]:
    """leaf id -> the gates that zero it: every gate whose score is not exactly 1."""
    out: dict[str, list[str]] = {}
    for lf in leaves:
        if lf.gate_scope and values[lf.id] != 1:
            for x in lf.gate_scope:
                out.setdefault(x, []).append(lf.id)
    return out


def _sum(leaves: list[LeafScore], upper: bool) -> tuple[Fraction, Fraction, dict[str, Fraction]]:
    """(R, coverage, phase scores) exactly."""
    values = _values(leaves, upper)
    gated = _gates(leaves, values)
    r, covered, phases = Fraction(0), Fraction(0), {p: Fraction(0) for p in PHASES}
    for lf in leaves:
        s = Fraction(0) if lf.id in gated else values[lf.id]
        if s is None:
            continue
        w = _weight(lf)
        r += w * s
        covered += w
        if lf.phase in phases:
            phases[lf.phase] += w * s
    return r, covered, phases


def finalize(machine: list[LeafScore], reviews: list[ReviewRecord], required: int = 1,
             evidence_digest: str | None = None) -> tuple[list[LeafScore], dict[str, Any]]:
    """(final leaves, the Scores fields they imply) from machine results and the trial's review records."""
    by_leaf: dict[str, list[ReviewRecord]] = {}
    for rec in reviews:
        by_leaf.setdefault(rec.leaf_id, []).append(rec)
    decided: list[LeafScore] = []
    stale_total = 0
    for lf in machine:
        lf = machine_result(lf)
        records = by_leaf.get(lf.id, [])
        valid = [r for r in records if r.judged(evidence_digest, lf.evidence_digest)]
        stale = len(records) - len(valid)
        stale_total += stale
        decision = decide(valid, required, lf.scale) if valid else None
        if decision is None:
            decided.append(lf.model_copy(update={"review": {"reviewers": [], "records": 0, "stale": stale}})
                           if stale else lf)
            continue
        decided.append(lf.model_copy(update={
            "score": decision["score"], "status": decision["status"], "rationale": decision["rationale"],
            "machine": {"score": lf.score, "status": lf.status, "rationale": lf.rationale},
            "review": {"reviewers": decision["reviewers"], "records": len(valid), "stale": stale}}))

    gated = _gates(decided, _values(decided, upper=False))
    by_id = {lf.id: lf for lf in decided}
    final = []
    for lf in decided:
        gates = gated.get(lf.id)
        if not gates:
            final.append(lf)
            continue
        why = "; ".join(f"{g} {'is ' + by_id[g].status if by_id[g].score is None else f'scored {by_id[g].score:g}'}"
                        for g in gates)
        # a failing gate zeroed by another keeps its own reason in view: it is why the rest scored 0
        own = f"; its own check: {lf.rationale}" if lf.gate_scope and lf.score != 1 and lf.rationale else ""
        final.append(lf.model_copy(update={
            "score": 0.0, "status": "gated", "gated_by": gates,
            "rationale": f"gated: {why} (a gate must score exactly 1){own}",
            "machine": lf.machine or {"score": lf.score, "status": lf.status, "rationale": lf.rationale}}))

    r, covered, phases = _sum(decided, upper=False)
    r_up, _, _ = _sum(decided, upper=True)
    phase_weights = {p: sum((_weight(lf) for lf in decided if lf.phase == p), Fraction(0)) for p in PHASES}
    fields = {"R": float(r), "coverage": float(covered), "final": covered == 1, "full": is_full(r),
              "R_upper": float(r_up), "full_upper": is_full(r_up),
              "exact": {"R": str(r), "R_upper": str(r_up), "coverage": str(covered)},
              "phases": {p: float(v) for p, v in phases.items()},
              "phase_weights": {p: float(v) for p, v in phase_weights.items()},
              "needs_rescoring": any(lf.status == "withheld" for lf in final),
              "stale_reviews": stale_total, "evidence_digest": evidence_digest}
    return final, fields
