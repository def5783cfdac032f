"""The finaliser: reviews bound to their evidence, gates after reviews, and R computed exactly.

The property tests compare the finaliser with an independent, recursive, fraction-exact computation
over the rubric tree (a node is the weighted mean of its children; a gate child that does not score
exactly 1 zeroes its siblings' subtrees), for random rubrics and random leaf results.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.rubric import parse_rubric
from workbench.scoring.finalize import ReviewRecord, decide, finalize
from workbench.scoring.results import LeafScore
from workbench.scoring.sota import band, improvement

EV = "evidence-digest-1"


def machine(rubric, results: dict[str, tuple[str, float | None]]) -> list[LeafScore]:
    """Machine results for a rubric's leaves: {id: (status, score)}; every leaf's evidence digest is its id."""
    return [LeafScore(id=lf.id, title=lf.id, phase=lf.phase, effective_weight=lf.effective_weight,
                      weight=str(lf.weight), score=results[lf.id][1], status=results[lf.id][0], method="deterministic",
                      gate_scope=list(lf.gate_scope), evidence_digest=f"leaf-{lf.id}", scale="continuous")
            for lf in rubric.leaves]


COUNTER = iter(range(1, 1_000_000))


def review(leaf: str, score: float, who: str = "Ada", kind: str = "review", evidence: str = EV) -> ReviewRecord:
    return ReviewRecord(review_id=next(COUNTER), leaf_id=leaf, kind=kind, reviewer=who, score=score,
                        evidence_digest=evidence, leaf_evidence=f"leaf-{leaf}")


def leaf(id, w=1, cat="Validation", **kw):
    return {"id": id, "weight": w, "task_category": cat, "requirements": id, **kw}


# --- gates and reviews --------------------------------------------------------------------------

GATED = parse_rubric({"id": "r", "sub_tasks": [
    leaf("g", gate=True, cat="Execution"), leaf("a"),
    {"id": "sub", "weight": 2, "sub_tasks": [leaf("b"), leaf("c")]},
    {"id": "other", "weight": 1, "sub_tasks": [leaf("h", gate=True), leaf("d")]}]})
# weights: g 1/5, a 1/5, b 1/5, c 1/5, h 1/10, d 1/10
ALL_PASS = {"g": ("scored", 1.0), "a": ("scored", 1.0), "b": ("scored", 1.0), "c": ("scored", 1.0),
            "h": ("scored", 1.0), "d": ("scored", 1.0)}


def by_id(leaves):
    return {lf.id: lf for lf in leaves}


def test_an_expert_failing_a_gate_zeroes_its_sibling_subtrees():
    final, f = finalize(machine(GATED, ALL_PASS), [review("g", 0.0)], evidence_digest=EV)
    lf = by_id(final)
    assert lf["g"].status == "reviewed" and lf["g"].score == 0
    assert {x: lf[x].status for x in "abchd"} == {"a": "gated", "b": "gated", "c": "gated", "h": "gated",
                                                  "d": "gated"}
    assert lf["b"].machine["score"] == 1.0 and lf["b"].gated_by == ["g"]  # kept, to be restored
    assert f["R"] == 0 and f["exact"]["R"] == "0"


def test_an_expert_passing_a_gate_the_machine_failed_restores_its_siblings():
    results = {**ALL_PASS, "g": ("scored", 0.0)}
    gated, _ = finalize(machine(GATED, results), [], evidence_digest=EV)
    assert by_id(gated)["a"].status == "gated"
    final, f = finalize(gated, [review("g", 1.0)], evidence_digest=EV)  # re-finalised from the gated leaves
    lf = by_id(final)
    assert lf["a"].status == "scored" and lf["a"].score == 1.0 and lf["a"].machine is None
    assert f["R"] == 1.0 and f["full"] and f["final"]


def test_two_failing_gates_that_gate_each_other_keep_their_own_reasons_in_view():
    twin = parse_rubric({"id": "r", "sub_tasks": [leaf("g1", gate=True, cat="Execution"),
                                                  leaf("g2", gate=True, cat="Execution"), leaf("a")]})
    leaves = [lf.model_copy(update={"rationale": f"{lf.id}: the check's reason"}) for lf in
              machine(twin, {"g1": ("scored", 0.0), "g2": ("scored", 0.0), "a": ("scored", 1.0)})]
    lf = by_id(finalize(leaves, [], evidence_digest=EV)[0])
    assert lf["g1"].rationale.startswith("gated: g2 scored 0") and lf["g1"].rationale.endswith(
        "; its own check: g1: the check's reason")
    assert lf["g2"].rationale.endswith("its own check: g2: the check's reason")
    assert "its own check" not in lf["a"].rationale  # a passing leaf zeroed by a gate: only why it was zeroed


@pytest.mark.parametrize("status,score", [("pending_review", None), ("withheld", None), ("scored", 0.5)])
def test_a_gate_that_is_not_exactly_1_gates_even_when_pending_or_withheld(status, score):
    final, f = finalize(machine(GATED, {**ALL_PASS, "h": (status, score)}), [], evidence_digest=EV)
    assert by_id(final)["d"].status == "gated" and by_id(final)["a"].status == "scored"
    assert f["R_upper"] == (1.0 if score is None else pytest.approx(0.85))  # passing a pending gate restores d
    assert not f["final"] or score is not None


def test_reviews_of_other_evidence_are_stale_and_never_applied():
    leaves = machine(GATED, {**ALL_PASS, "a": ("pending_review", None)})
    stale = [review("a", 1.0, evidence="evidence-of-an-earlier-run"),
             ReviewRecord(99, "a", "review", "Old", 1.0)]  # recorded before reviews were bound
    final, f = finalize(leaves, stale, evidence_digest=EV)
    assert by_id(final)["a"].status == "pending_review" and by_id(final)["a"].review["stale"] == 2
    assert f["stale_reviews"] == 2 and f["R"] == pytest.approx(0.8) and f["R_upper"] == 1.0
    moved = [ReviewRecord(100, "a", "review", "Ada", 1.0, evidence_digest=EV, leaf_evidence="leaf-other")]
    assert by_id(finalize(leaves, moved, evidence_digest=EV)[0])["a"].status == "pending_review"


def test_adjudication_outranks_reviewers_and_disagreement_is_disputed():
    recs = [review("a", 1.0, "Ada"), review("a", 0.0, "Grace")]
    assert decide(recs, 2)["status"] == "disputed"
    assert decide(recs + [review("a", 1.0, "Chair", kind="adjudication")], 2)["status"] == "adjudicated"
    assert decide([review("a", 0.7, "Ada"), review("a", 0.9, "Grace")], 2, "continuous")["score"] == 0.8


# --- exactness -----------------------------------------------------------------------------------

def test_exactly_nine_tenths_is_not_full_where_summed_floats_say_it_is():
    rubric = parse_rubric({"id": "r", "sub_tasks": [leaf("a", 1), leaf("b", 2), leaf("c", 4), leaf("d", 3)]})
    results = {"a": ("scored", 0.0), "b": ("scored", 1.0), "c": ("scored", 1.0), "d": ("scored", 1.0)}
    leaves = machine(rubric, results)
    assert sum(lf.effective_weight for lf in leaves[1:]) > 0.9  # the float sum crosses the boundary
    _, f = finalize(leaves, [], evidence_digest=EV)
    assert f["exact"]["R"] == "9/10" and not f["full"]


@st.composite
def rubrics(draw, depth=0):
    """A random rubric node: integer weights (children sum > 0), depth <= 4, some gate leaves."""
    counter = draw(st.shared(st.builds(lambda: iter(range(10_000))), key="ids"))

    def node(d: int) -> dict:
        if d >= 4 or (d > 0 and draw(st.booleans())):
            return {"id": f"L{next(counter)}", "weight": draw(st.integers(0, 5)), "requirements": "x",
                    "task_category": draw(st.sampled_from(["Modeling", "Execution", "Validation"])),
                    "gate": draw(st.integers(0, 4)) == 0}
        kids = [node(d + 1) for _ in range(draw(st.integers(1, 4)))]
        if sum(k["weight"] for k in kids) == 0:
            kids[0]["weight"] = 1
        return {"id": f"N{next(counter)}", "weight": draw(st.integers(1, 5)), "requirements": "x", "sub_tasks": kids}

    return node(depth)


RESULT = st.one_of(st.just(("scored", 0.0)), st.just(("scored", 1.0)), st.just(("missing_evidence", 0.0)),
                   st.just(("pending_review", None)), st.just(("withheld", None)),
                   st.integers(0, 20).map(lambda k: ("scored", k / 20)))


def independent_R(node: dict, results: dict, upper: bool) -> Fraction:
    """The rubric's R by recursion over the tree, with exact weights as written."""
    def value(n: dict) -> Fraction:
        status, score = results[n["id"]]
        if score is None:
            return Fraction(1) if upper else Fraction(0)
        return Fraction(repr(score))

    def passes(n: dict) -> bool:
        return results[n["id"]][1] is not None and value(n) == 1 or (upper and results[n["id"]][1] is None)

    if not node.get("sub_tasks"):
        return value(node)
    kids = node["sub_tasks"]
    failing = {k["id"] for k in kids if not k.get("sub_tasks") and k.get("gate") and not passes(k)}
    total = sum(Fraction(k["weight"]) for k in kids)
    acc = Fraction(0)
    for k in kids:
        acc += Fraction(k["weight"]) * (Fraction(0) if failing - {k["id"]} else independent_R(k, results, upper))
    return acc / total


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(tree=rubrics(), data=st.data())
def test_the_finaliser_matches_an_independent_exact_computation(tree, data):
    rubric = parse_rubric(tree)
    results = {lf.id: data.draw(RESULT) for lf in rubric.leaves}
    _, f = finalize(machine(rubric, results), [], evidence_digest=EV)
    r, r_up = independent_R(tree, results, False), independent_R(tree, results, True)
    assert Fraction(f["exact"]["R"]) == r and Fraction(f["exact"]["R_upper"]) == r_up
    assert f["full"] == (r > Fraction(9, 10)) and f["full_upper"] == (r_up > Fraction(9, 10))
    assert f["R"] == float(r) and r <= r_up
    assert Fraction(f["exact"]["coverage"]) <= 1 and f["final"] == (Fraction(f["exact"]["coverage"]) == 1)


@settings(max_examples=300, deadline=None)
@given(sota=st.integers(1, 10**6), scale=st.sampled_from([10, 100, 1000]),
       g=st.sampled_from([Fraction(1, 10), Fraction(0), Fraction(-1, 20)]),
       direction=st.sampled_from(["higher_is_better", "lower_is_better"]))
def test_sota_bands_are_exact_at_their_edges(sota, scale, g, direction):
    s = Fraction(sota, scale)
    m = s + (1 if direction == "higher_is_better" else -1) * g * s  # exactly on the band's edge
    got = improvement(float(m), float(s), direction)
    assert got == g
    assert band(got) == {Fraction(1, 10): "match", Fraction(0): "match", Fraction(-1, 20): "reproduce"}[g]
