"""Question-answer scoring (HeurekaBench): MCQ letter sets and metrics, OEQ atomic-fact ratings."""

import pytest

from workbench.scoring.qa import label_facts, mcq_metrics, rating
from workbench.task.questions import Fact, Questions, letters, synthesized_rubric


@pytest.mark.parametrize("labels, expected", [
    (["PRESENT"] * 4, 5),
    (["PRESENT", "PRESENT", "PRESENT", "MISSING"], 4),
    (["PRESENT", "PRESENT", "PRESENT", "INCORRECT"], 3),  # most present but one contradicted
    (["PRESENT", "PRESENT", "MISSING", "MISSING"], 3),     # half is not most
    (["PRESENT", "PARTIAL", "MISSING"], 3),
    (["PARTIAL", "MISSING", "MISSING"], 2),
    (["MISSING", "MISSING"], 1),
    (["INCORRECT", "INCORRECT", "PRESENT"], 1),            # mostly incorrect
    ([], 1),
])
def test_rating_from_fact_labels(labels, expected):
    assert rating(labels) == expected


@pytest.mark.parametrize("answer, expected", [
    (["a", "C"], {"A", "C"}), ("A, C", {"A", "C"}), ("AC", {"A", "C"}), ("<solution>B</solution>", {"B"}),
    ("The answer is B and D", {"B", "D"}), (None, set()), ("", set()),
])
def test_letters(answer, expected):
    assert letters(answer) == expected


def test_mcq_metrics_by_hand():
    pairs = [({"A"}, {"A"}), ({"A", "B"}, {"A"}), (set(), {"C"}), ({"B", "C"}, {"B", "C", "D"})]
    m = mcq_metrics(pairs)
    assert m["mcq_accuracy"] == pytest.approx(1 / 4)
    # per question precision 1, 1/2, 0, 1; recall 1, 1, 0, 2/3
    assert m["macro_precision"] == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert m["macro_recall"] == pytest.approx((1 + 1 + 0 + 2 / 3) / 4)
    f1 = [1.0, 2 * 0.5 / 1.5, 0.0, 2 * (2 / 3) / (5 / 3)]
    assert m["macro_f1"] == pytest.approx(sum(f1) / 4)
    # pooled: tp 1+1+0+2 = 4, fp 0+1+0+0 = 1, fn 0+0+1+1 = 2
    assert m["micro_precision"] == pytest.approx(4 / 5) and m["micro_recall"] == pytest.approx(4 / 6)
    assert m["micro_f1"] == pytest.approx(2 * 0.8 * (2 / 3) / (0.8 + 2 / 3))


def test_fact_patterns_label_present_missing_incorrect():
    facts = [Fact(fact="7 clusters", pattern=r"\b7\b", incorrect_pattern=r"\b(6|8) clusters"),
             Fact(fact="NK cells express GNLY", pattern="GNLY")]
    assert label_facts("We find 7 clusters; GNLY marks NK cells.", facts) == ["PRESENT", "PRESENT"]
    assert label_facts("There are 8 clusters.", facts) == ["INCORRECT", "MISSING"]


def test_questions_file_is_validated():
    with pytest.raises(ValueError, match="option letters"):
        Questions.model_validate({"questions": [{"id": "q1", "type": "mcq", "question": "?", "options": {"A": "x"},
                                                 "answer": ["B"]}]})
    with pytest.raises(ValueError, match="facts"):
        Questions.model_validate({"questions": [{"id": "o1", "type": "oeq", "question": "?", "answer": "x"}]})
    with pytest.raises(ValueError, match="duplicate"):
        q = {"id": "o1", "type": "oeq", "question": "?", "answer": "x", "facts": [{"fact": "x"}]}
        Questions.model_validate({"questions": [q, q]})


def test_a_fact_labelling_reply_that_is_not_an_object_is_re_asked_not_a_crash():
    from workbench.scoring.judge.prompt import parse_facts_verdict

    with pytest.raises(ValueError, match="one JSON object"):
        parse_facts_verdict('["F1", "PRESENT"]', 1)
    v = parse_facts_verdict('```json\n{"facts": [{"id": "F1", "label": "PRESENT"}], "reason": "ok"}\n```', 1)
    assert v.score == 1.0 and v.checks == ["F1 PRESENT: "]


# --- shotgun answers (issue 17): one blob of every candidate value scored 1.0 before ------------------------

def _facts_check(answer_text, qs_data, qid):
    """Score one OEQ answer through the synthesized rubric's own check spec."""
    from types import SimpleNamespace

    from workbench.scoring.qa import Facts, facts

    qs = Questions.model_validate(qs_data)
    leaf = next(lf for lf in synthesized_rubric(qs, "t")["sub_tasks"] if lf["id"] == qid)
    spec = {k: v for k, v in leaf["check"].items() if k != "kind"}
    ev = SimpleNamespace(read_json=lambda path: {qid: answer_text})
    return facts(ev, Facts.model_validate(spec))


QS = {"kinds": {"population": {"values": ["CD14+ Monocyte", "CD19+ B", "CD34+", "CD4+/CD45RA+/CD25- Naive T",
                                          "CD56+ NK", "Dendritic"]},
                "gene": {"values": ["CD79A", "CD79B", "MS4A1", "LYZ", "NKG7", "GNLY", "IGJ", "CD74"]}},
      "questions": [
          {"id": "size", "type": "oeq", "question": "How many cells, genes and populations?",
           "answer": "700 cells, 765 genes and 10 populations.",
           "facts": [{"fact": "700 cells", "pattern": r"\b700\b"}, {"fact": "765 genes", "pattern": r"\b765\b"},
                     {"fact": "10 populations", "pattern": r"\b(10|ten)\b"}]},
          {"id": "phase", "type": "oeq", "question": "How are cells distributed over phases?",
           "answer": "G1 501 (71.6%), S 182 (26.0%), G2M 17 (2.4%).",
           "facts": [{"fact": "501 in G1", "pattern": r"\b501\b|71\.6\s*%"},
                     {"fact": "182 in S", "pattern": r"\b182\b|26(\.0)?\s*%"},
                     {"fact": "17 in G2M", "pattern": r"\b17\b|2\.4\s*%"}]},
          {"id": "smallest", "type": "oeq", "question": "Which population is the smallest?",
           "answer": "CD4+/CD45RA+/CD25- Naive T, with 8 cells.",
           "facts": [{"fact": "naive T is the smallest", "pattern": "naive T", "kind": "population"},
                     {"fact": "8 cells", "pattern": r"\b8 cells"}]},
          {"id": "bmark", "type": "oeq", "question": "What are the top 2 markers of CD19+ B cells?",
           "answer": "CD79A and CD79B.",
           "facts": [{"fact": "CD79A", "pattern": r"\bCD79A\b"}, {"fact": "CD79B", "pattern": r"\bCD79B\b"}]},
      ]}


@pytest.mark.parametrize("qid, honest", [
    ("size", "700 cells, 765 genes and 10 FACS populations (bulk_labels)."),
    ("phase", "G1: 501 cells (71.6%); S: 182 cells (26.0%); G2M: 17 cells (2.4%)"),  # counts and shares
    ("smallest", "CD4+/CD45RA+/CD25- Naive T is the smallest population with 8 cells."),  # CD4+ is no number
    ("bmark", "Top 2 Wilcoxon markers of CD19+ B cells: CD79A, CD79B"),  # the question's own names are free
])
def test_an_honest_answer_with_supporting_values_is_not_a_shotgun(qid, honest):
    out = _facts_check(honest, QS, qid)
    assert out.score == 1.0 and "shotgun" not in out.rationale


@pytest.mark.parametrize("qid, blob, what", [
    ("size", " ".join(str(i) for i in range(1001)), "1001 distinct integer"),
    ("size", ",".join(str(i) for i in range(1001)), "1001 distinct integer"),  # "0,1,2" is not one number
    ("phase", "cells: " + ", ".join(f"{i / 10:.1f}%" for i in range(1001)), "distinct percentage"),
    ("smallest", "one of CD14+ Monocyte, CD19+ B, CD34+, CD4+/CD45RA+/CD25- Naive T, CD56+ NK; 8 cells",
     "5 distinct population"),
    ("bmark", "cd79a, cd79b, ms4a1, lyz, nkg7", "5 distinct gene"),  # case does not hide a gene
])
def test_a_shotgun_answer_scores_0_with_every_fact_incorrect(qid, blob, what):
    question = next(q for q in Questions.model_validate(QS).questions if q.id == qid)
    before = label_facts(blob, question.facts)
    assert "PRESENT" in before  # the patterns alone would have credited it
    out = _facts_check(blob, QS, qid)
    assert out.score == 0.0 and "shotgun" in out.rationale and what in out.rationale
    assert out.rationale.count("INCORRECT") == len(next(q for q in QS["questions"] if q["id"] == qid)["facts"])


def test_candidate_numbers_thousands_and_embedded_digits():
    from workbench.task.questions import NUMBER, candidates

    got = candidates("68,000 cells in G2M, CD4+ T and 3 clusters; r = 0.91, 26.0 %", NUMBER, {})
    assert got == {"integer": {68000.0, 3.0}, "decimal": {0.91}, "percentage": {26.0}}
    assert candidates("100,101,102,103", NUMBER, {}) == {"integer": {100.0, 101.0, 102.0, 103.0}}
    assert candidates("top 5: a, b", NUMBER, {}, exclude="What are the top 5?") == {}


def test_fact_kinds_are_declared_or_inferred():
    qs = Questions.model_validate(QS)
    by = {q.id: q for q in qs.questions}
    assert [qs.fact_kind(by["size"], f) for f in by["size"].facts] == ["number"] * 3
    assert [qs.fact_kind(by["bmark"], f) for f in by["bmark"].facts] == ["gene", "gene"]
    assert [qs.fact_kind(by["smallest"], f) for f in by["smallest"].facts] == ["population", "number"]
    with pytest.raises(ValueError, match="unknown kind"):
        Questions.model_validate({"questions": [{"id": "o", "type": "oeq", "question": "?", "answer": "x",
                                                 "facts": [{"fact": "x", "pattern": "x", "kind": "cells"}]}]})


def test_an_mcq_answered_with_every_letter_is_wrong_unless_all_are_correct():
    from types import SimpleNamespace

    from workbench.scoring.qa import Mcq, mcq

    ev = SimpleNamespace(read_json=lambda path: {"q": ["A", "B", "C", "D"]})
    assert mcq(ev, Mcq(path="a.json", question="q", answer=["A", "C"])).score == 0.0
    assert mcq(ev, Mcq(path="a.json", question="q", answer=["A", "B", "C", "D"])).score == 1.0


# --- gates (issue 17): answers count only when the replay's analysis produced them -------------------------

def test_declared_gates_become_root_gate_leaves_over_every_question():
    from workbench.rubric import parse_rubric

    data = {**QS, "gates": [{"id": "G1", "title": "answers written by scanpy", "requirements": "receipts",
                             "check": {"kind": "written_by", "path": "submission/results/answers.json",
                                       "package": "scanpy"}}]}
    rubric = parse_rubric(synthesized_rubric(Questions.model_validate(data), "t"))
    [gate] = [lf for lf in rubric.leaves if lf.id == "G1"]
    assert gate.node.gate and gate.effective_weight == 0
    assert set(gate.gate_scope) == {q["id"] for q in QS["questions"]}
    with pytest.raises(ValueError, match="gate ids"):
        Questions.model_validate({**data, "gates": [{**data["gates"][0], "id": "size"}]})


def test_a_failing_gate_zeroes_typed_in_answers_and_the_mcq_accuracy():
    from workbench.scoring.finalize import finalize
    from workbench.scoring.qa import summarize_questions
    from workbench.scoring.results import LeafScore

    data = {"gates": [{"id": "G1", "title": "answers written by scanpy", "requirements": "receipts",
                       "check": {"kind": "written_by", "path": "submission/results/answers.json",
                                 "package": "scanpy"}}],
            "questions": [{"id": "m1", "type": "mcq", "question": "?", "options": {"A": "x", "B": "y"},
                           "answer": ["A"]}]}
    qs = Questions.model_validate(data)
    from workbench.rubric import parse_rubric

    rubric = parse_rubric(synthesized_rubric(qs, "t"))
    machine = []
    for lf in rubric.leaves:  # typed in: the answer is right, the receipts say no scanpy wrote it
        machine.append(LeafScore(id=lf.id, title=lf.id, phase=lf.phase, effective_weight=float(lf.effective_weight),
                                 weight=str(lf.effective_weight), gate_scope=list(lf.gate_scope),
                                 method="deterministic", status="scored", score=0.0 if lf.id == "G1" else 1.0))
    final, fields = finalize(machine, [], {}, None)
    assert fields["R"] == 0.0
    from types import SimpleNamespace

    block = summarize_questions(qs, SimpleNamespace(read_json=lambda path: {"m1": ["A"]}), final)
    assert block["mcq_accuracy"] == 0.0
