"""``scoring = "qa"`` (HeurekaBench): questions answered from an analysis of real data.

``tests/questions.json`` holds multiple-choice questions (MCQ: the set of correct letters) and
open-ended ones (OEQ: a ground-truth answer split into atomic facts). The submission's replay writes
its answers to one JSON file (``{question id: answer}``). Each question becomes one rubric leaf, so
review, R and the analysis treat qa tasks like any other:

- MCQ: 1 when the answered letter set equals the truth exactly (check kind ``mcq``); the ``qa`` block
  adds accuracy and macro/micro precision, recall and F1 over letter sets.
- OEQ: every ground-truth fact is labelled PRESENT / PARTIAL / MISSING / INCORRECT and the labels give a
  1-5 rating (:func:`rating`); the leaf scores ``(rating - 1) / 4``. Facts with a ``pattern`` are
  labelled deterministically (check kind ``facts``); a question with any fact needing interpretation
  goes to the judge, which labels the facts and the workbench computes the rating from the labels.
- Shotgun answers: a pattern cannot tell a stated value from one buried in a list of every value, so
  the ``facts`` check counts the *candidate values* an answer carries, per kind of value its facts are
  about (:func:`candidates`): numbers (integers, decimals and percentages counted apart), and the values
  of a vocabulary or a pattern declared in ``kinds`` (cell populations, gene symbols). An answer carrying
  more candidates of a kind than the question has facts is a shotgun: every fact is INCORRECT (score 0).
  Values the question itself names are not candidates. A fact's kind is its ``kind``, else inferred from
  what its pattern matches in the ground truth (a number, or a value of a declared kind).
- Gates: ``gates`` in questions.json are extra root leaves (weight 0 by default) with ``"gate": true``:
  receipt checks, a ``recompute`` or a task check. One that does not score exactly 1 zeroes every question
  (a typed-in answers file is not an analysis the replay ran).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import Field

from ..evidence import Evidence, MissingEvidence, normalize
from ..task.questions import NUMBER, Fact, Kind, Questions, candidates, letters
from .checks import CHECK_KINDS, CheckKind, CheckOutcome, _Params

LABELS = ("PRESENT", "PARTIAL", "MISSING", "INCORRECT")
RATING_RULES = ("5 all facts present; 4 most present and none incorrect; 3 some present; 2 none present but "
                "some partial; 1 all missing or mostly incorrect")


def rating(labels: list[str]) -> int:
    """HeurekaBench's 1-5 rating from atomic-fact labels."""
    n = len(labels)
    if n == 0:
        return 1
    present, partial, incorrect = (sum(lb == x for lb in labels) for x in ("PRESENT", "PARTIAL", "INCORRECT"))
    if incorrect > n / 2:
        return 1
    if present == n:
        return 5
    if present > n / 2 and incorrect == 0:
        return 4
    if present >= 1:
        return 3
    if partial >= 1:
        return 2
    return 1


# --- check kinds --------------------------------------------------------------------------------------

def _answer(ev: Evidence, path: str, question: str) -> Any:
    data = ev.read_json(path)
    if not isinstance(data, dict) or question not in data or data[question] in (None, "", []):
        raise MissingEvidence(f"{normalize(path)}:{question}", "no answer")
    return data[question]


class Mcq(_Params):
    path: str
    question: str
    answer: list[str]


def mcq(ev: Evidence, p: Mcq) -> CheckOutcome:
    got, truth = letters(_answer(ev, p.path, p.question)), letters(p.answer)
    ok = got == truth
    return CheckOutcome(1.0 if ok else 0.0, f"{'pass' if ok else 'fail'}: answered {''.join(sorted(got)) or '-'}"
                        f"{'' if ok else ' (not the exact set)'}", [normalize(p.path)])


class Facts(_Params):
    path: str
    question: str
    facts: list[Fact]
    question_text: str = ""
    kinds: dict[str, Kind] = Field(default_factory=dict)


def label_facts(text: str, facts: list[Fact]) -> list[str]:
    out = []
    for f in facts:
        if f.incorrect_pattern and re.search(f.incorrect_pattern, text, re.I):
            out.append("INCORRECT")
        elif f.pattern and re.search(f.pattern, text, re.I):
            out.append("PRESENT")
        else:
            out.append("MISSING")
    return out


def shotgun(text: str, p: Facts) -> str | None:
    """Why the answer is a shotgun (more candidate values of a kind than the question has facts), or None."""
    budget = len(p.facts)
    for kind in sorted({f.kind for f in p.facts if f.kind}):
        for cls, values in sorted(candidates(text, kind, p.kinds, p.question_text).items()):
            if len(values) > budget:
                what = f"{cls} values" if kind == NUMBER else f"{kind} values"
                return (f"the answer carries {len(values)} distinct {what} for a question of {budget} fact(s): "
                        "a list of candidates, not an answer")
    return None


def facts(ev: Evidence, p: Facts) -> CheckOutcome:
    answer = _answer(ev, p.path, p.question)
    text = answer if isinstance(answer, str) else json.dumps(answer)
    why = shotgun(text, p)
    labels = ["INCORRECT"] * len(p.facts) if why else label_facts(text, p.facts)
    r = rating(labels)
    detail = "; ".join(f"{lb}: {f.fact}" for lb, f in zip(labels, p.facts, strict=True))
    return CheckOutcome((r - 1) / 4, f"rating {r}/5 ({f'shotgun: {why}; ' if why else ''}{detail})",
                        [normalize(p.path)])


CHECK_KINDS["mcq"] = CheckKind(Mcq, mcq)
CHECK_KINDS["facts"] = CheckKind(Facts, facts)


# --- the qa block ------------------------------------------------------------------------

def _prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def mcq_metrics(pairs: list[tuple[set[str], set[str]]]) -> dict[str, float | int | None]:
    """Exact-set accuracy plus macro (mean over questions) and micro (pooled letters) precision/recall/F1.
    ``pairs`` are (answered, truth); an unanswered question is an empty set."""
    if not pairs:
        return {"mcq": 0, "mcq_accuracy": None}
    per = [_prf(len(a & t), len(a - t), len(t - a)) for a, t in pairs]
    micro = _prf(sum(len(a & t) for a, t in pairs), sum(len(a - t) for a, t in pairs),
                 sum(len(t - a) for a, t in pairs))
    return {"mcq": len(pairs), "mcq_accuracy": sum(a == t for a, t in pairs) / len(pairs),
            "macro_precision": math.fsum(x[0] for x in per) / len(per),
            "macro_recall": math.fsum(x[1] for x in per) / len(per),
            "macro_f1": math.fsum(x[2] for x in per) / len(per),
            "micro_precision": micro[0], "micro_recall": micro[1], "micro_f1": micro[2]}


def oeq_summary(leaves, oeq_ids) -> dict[str, Any]:
    """OEQ ratings from the (possibly reviewed) leaf scores; pending ones are counted, not rated."""
    from .results import COUNTED

    oeq = set(oeq_ids)
    rated = {lf.id: 1 + 4 * lf.score for lf in leaves
             if lf.id in oeq and lf.status in COUNTED and lf.score is not None}
    return {"oeq": len(oeq), "oeq_rated": len(rated), "oeq_pending": len(oeq) - len(rated),
            "oeq_mean": math.fsum(rated.values()) / len(rated) if rated else None, "oeq_ratings": rated}


def summarize_questions(qs: Questions, ev: Evidence, leaves) -> dict[str, Any]:
    """The ``qa`` block of scores.json."""
    try:
        answers = ev.read_json(qs.answers)
        answers = answers if isinstance(answers, dict) else {}
    except MissingEvidence:
        answers = {}
    gated = {lf.id for lf in leaves if lf.status == "gated"}  # a gated answer counts as unanswered
    pairs = [(set() if q.id in gated else letters(answers.get(q.id)), letters(q.answer))
             for q in qs.questions if q.type == "mcq"]
    oeq_ids = sorted(q.id for q in qs.questions if q.type == "oeq")
    return {**mcq_metrics(pairs), **oeq_summary(leaves, oeq_ids), "oeq_ids": oeq_ids, "answers_file": qs.answers,
            "rating_rules": RATING_RULES}
