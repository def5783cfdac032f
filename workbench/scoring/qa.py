"""``scoring = "qa"`` (HeurekaBench, seed 004): questions answered from an analysis of real data.

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
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..evidence import Evidence, MissingEvidence, normalize
from .checks import CHECK_KINDS, CheckKind, CheckOutcome, _Params

LABELS = ("PRESENT", "PARTIAL", "MISSING", "INCORRECT")
RATING_RULES = ("5 all facts present; 4 most present and none incorrect; 3 some present; 2 none present but "
                "some partial; 1 all missing or mostly incorrect")


def rating(labels: list[str]) -> int:
    """Seed 004's 1-5 rating from atomic-fact labels."""
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


def letters(answer: Any) -> set[str]:
    """An MCQ answer as a set of option letters: ["A", "C"], "A, C", "AC" or "<solution>A,C</solution>"."""
    if isinstance(answer, list | tuple | set):
        return {str(a).strip().upper() for a in answer if str(a).strip()}
    text = re.sub(r"</?solution>", " ", str(answer or "")).strip()
    if re.fullmatch(r"[A-Za-z]{1,8}", text):
        return set(text.upper())
    return {m.upper() for m in re.findall(r"\b([A-Za-z])\b", text)}


# --- tests/questions.json -----------------------------------------------------------------------------

class Fact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fact: str = Field(min_length=1)
    pattern: str | None = Field(default=None, description="regex (case-insensitive): the fact is PRESENT")
    incorrect_pattern: str | None = Field(default=None, description="regex: the answer contradicts the fact")

    @field_validator("pattern", "incorrect_pattern")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return v


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    type: Literal["mcq", "oeq"]
    question: str = Field(min_length=1)
    options: dict[str, str] | None = None
    answer: list[str] | str
    facts: list[Fact] = Field(default_factory=list)
    phase: Literal["Modeling", "Execution", "Validation"] = "Validation"
    verified_by: str | None = Field(default=None, description="how the answer was verified on the data")

    @model_validator(mode="after")
    def _consistent(self):
        if self.type == "mcq":
            if not self.options:
                raise ValueError("an mcq needs options")
            truth = letters(self.answer)
            if not truth or not truth <= {k.upper() for k in self.options}:
                raise ValueError(f"answer {self.answer!r} must be option letters among {sorted(self.options)}")
        else:
            if not isinstance(self.answer, str) or not self.answer.strip():
                raise ValueError("an oeq's answer is its ground-truth text")
            if not self.facts:
                raise ValueError("an oeq needs its ground truth split into facts")
        return self

    @property
    def deterministic(self) -> bool:
        return self.type == "mcq" or all(f.pattern for f in self.facts)


class Questions(BaseModel):
    """tests/questions.json"""

    model_config = ConfigDict(extra="forbid")
    answers: str = Field(default="submission/results/answers.json",
                         description="the answers file in the evidence: {question id: answer}")
    questions: list[Question] = Field(min_length=1)

    @field_validator("questions")
    @classmethod
    def _unique(cls, qs: list[Question]) -> list[Question]:
        ids = [q.id for q in qs]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate question ids: {', '.join(dup)}")
        return qs


def load_questions(path: Path) -> Questions:
    from ..errors import load_json_model

    return load_json_model(path, Questions)


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


def facts(ev: Evidence, p: Facts) -> CheckOutcome:
    answer = _answer(ev, p.path, p.question)
    labels = label_facts(str(answer), p.facts)
    r = rating(labels)
    detail = "; ".join(f"{lb}: {f.fact}" for lb, f in zip(labels, p.facts, strict=True))
    return CheckOutcome((r - 1) / 4, f"rating {r}/5 ({detail})", [normalize(p.path)])


CHECK_KINDS["mcq"] = CheckKind(Mcq, mcq)
CHECK_KINDS["facts"] = CheckKind(Facts, facts)


# --- the rubric and the qa block ------------------------------------------------------------------------

def synthesized_rubric(qs: Questions, task_id: str) -> dict:
    """One equally weighted leaf per question."""
    leaves = []
    for q in qs.questions:
        leaf: dict[str, Any] = {"id": q.id, "weight": 1, "task_category": q.phase, "title": q.question[:120],
                                "requirements": q.question, "evidence_inputs": [{"path": qs.answers}]}
        if q.type == "mcq":
            leaf["check"] = {"kind": "mcq", "path": qs.answers, "question": q.id, "answer": sorted(letters(q.answer))}
        elif q.deterministic:
            leaf["check"] = {"kind": "facts", "path": qs.answers, "question": q.id,
                             "facts": [f.model_dump(exclude_none=True) for f in q.facts]}
            leaf["scale"] = "continuous"
        else:
            leaf.update(method="judge", scale="continuous", facts=[f.fact for f in q.facts], answer_key=q.id,
                        judge_notes=f"Ground-truth answer: {q.answer}\nAtomic facts of the ground truth:\n"
                        + "\n".join(f"F{i + 1}. {f.fact}" for i, f in enumerate(q.facts)))
        leaves.append(leaf)
    return {"id": task_id, "requirements": "Answer the questions from an analysis of the data.", "sub_tasks": leaves}


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


def evaluate(qs: Questions, ev: Evidence, leaves) -> dict[str, Any]:
    """The ``qa`` block of scores.json."""
    try:
        answers = ev.read_json(qs.answers)
        answers = answers if isinstance(answers, dict) else {}
    except MissingEvidence:
        answers = {}
    pairs = [(letters(answers.get(q.id)), letters(q.answer)) for q in qs.questions if q.type == "mcq"]
    oeq_ids = sorted(q.id for q in qs.questions if q.type == "oeq")
    return {**mcq_metrics(pairs), **oeq_summary(leaves, oeq_ids), "oeq_ids": oeq_ids, "answers_file": qs.answers,
            "rating_rules": RATING_RULES}
