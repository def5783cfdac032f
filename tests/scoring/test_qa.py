"""Question-answer scoring (seed 004): MCQ letter sets and metrics, OEQ atomic-fact ratings."""

import pytest

from workbench.scoring.qa import Fact, Questions, label_facts, letters, mcq_metrics, rating


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
    from workbench.scoring.judge import parse_facts_verdict

    with pytest.raises(ValueError, match="one JSON object"):
        parse_facts_verdict('["F1", "PRESENT"]', 1)
    v = parse_facts_verdict('```json\n{"facts": [{"id": "F1", "label": "PRESENT"}], "reason": "ok"}\n```', 1)
    assert v.score == 1.0 and v.checks == ["F1 PRESENT: "]
