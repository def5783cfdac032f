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
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..evidence import Evidence, MissingEvidence, normalize
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


def letters(answer: Any) -> set[str]:
    """An MCQ answer as a set of option letters: ["A", "C"], "A, C", "AC" or "<solution>A,C</solution>"."""
    if isinstance(answer, list | tuple | set):
        return {str(a).strip().upper() for a in answer if str(a).strip()}
    text = re.sub(r"</?solution>", " ", str(answer or "")).strip()
    if re.fullmatch(r"[A-Za-z]{1,8}", text):
        return set(text.upper())
    return {m.upper() for m in re.findall(r"\b([A-Za-z])\b", text)}


# --- tests/questions.json -----------------------------------------------------------------------------

NUMBER = "number"
# a standalone numeric literal (not the 4 of CD4+ or the 2 of G2M): 0.915, 26.0 %, 68,000 (one thousands
# separator); a longer comma chain is a list ("100,101,102" is three numbers, never one that hides them)
_NUMBER = re.compile(r"(?<![\w.])([-+\u2212]?)((?<!\d,)\d{1,3},\d{3}(?![\d,]\d|\d)|\d+(?:\.\d+)?)(\s*%)?(?![\w])")
_EDGE_BEFORE, _EDGE_AFTER = r"(?<![\w+/-])", r"(?![\w+/-])"


class Kind(BaseModel):
    """A kind of value an answer can name: a vocabulary (every population, every gene of the data set) or a
    regex; each distinct value of it found in an answer is one candidate."""

    model_config = ConfigDict(extra="forbid")
    values: list[str] = Field(default_factory=list, description="the kind's values (case-insensitive)")
    pattern: str | None = Field(default=None, description="or a regex: each distinct match is one candidate")

    @model_validator(mode="after")
    def _one_way(self):
        if bool(self.values) == bool(self.pattern):
            raise ValueError("a kind has either values or a pattern")
        if self.pattern:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return self

    def regex(self) -> re.Pattern:
        if self.pattern:
            return re.compile(self.pattern, re.I)
        alts = "|".join(re.escape(v) for v in sorted({v.strip() for v in self.values if v.strip()}, key=len,
                                                      reverse=True))
        return re.compile(f"{_EDGE_BEFORE}(?:{alts}){_EDGE_AFTER}", re.I)


def candidates(text: str, kind: str, kinds: dict[str, Kind], exclude: str = "") -> dict[str, set]:
    """The distinct values of ``kind`` an answer names, by class (numbers: integer / decimal / percent),
    leaving out those the question text ``exclude`` names itself."""
    def find(t: str) -> dict[str, set]:
        out: dict[str, set] = {}
        if kind == NUMBER:
            for sign, digits, pct in _NUMBER.findall(t):
                cls = "percentage" if pct else ("decimal" if "." in digits else "integer")
                value = float(digits.replace(",", "")) * (-1 if sign in "-\u2212" and sign else 1)
                out.setdefault(cls, set()).add(value)
        elif kind in kinds:
            found = {m.group(0).casefold() for m in kinds[kind].regex().finditer(t)}
            if found:
                out[kind] = found
        return out

    got, asked = find(text), find(exclude)
    return {c: v - asked.get(c, set()) for c, v in got.items() if v - asked.get(c, set())}


class Fact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fact: str = Field(min_length=1)
    pattern: str | None = Field(default=None, description="regex (case-insensitive): the fact is PRESENT")
    incorrect_pattern: str | None = Field(default=None, description="regex: the answer contradicts the fact")
    kind: str | None = Field(default=None, description="the kind of value the fact is about (number or a "
                             "declared kind); inferred from the pattern's match in the ground truth if not given")

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


class Gate(BaseModel):
    """An extra root leaf with ``"gate": true``: unless it scores exactly 1, every question scores 0."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    title: str = Field(min_length=1)
    requirements: str = Field(min_length=1)
    check: dict[str, Any] = Field(description="a check spec: receipts (written_by, loaded...), recompute, task")
    task_category: Literal["Modeling", "Execution", "Validation"] = "Execution"
    weight: float = Field(default=0.0, ge=0)
    evidence_inputs: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("check")
    @classmethod
    def _has_kind(cls, v: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(v.get("kind"), str):
            raise ValueError("a gate's check needs a kind")
        return v


class Questions(BaseModel):
    """tests/questions.json"""

    model_config = ConfigDict(extra="forbid")
    answers: str = Field(default="submission/results/answers.json",
                         description="the answers file in the evidence: {question id: answer}")
    kinds: dict[str, Kind] = Field(default_factory=dict,
                                   description="kinds of values answers name (vocabularies or regexes), for "
                                               "counting a shotgun answer's candidates")
    gates: list[Gate] = Field(default_factory=list, description="root gate leaves over every question")
    questions: list[Question] = Field(min_length=1)

    @field_validator("questions")
    @classmethod
    def _unique(cls, qs: list[Question]) -> list[Question]:
        ids = [q.id for q in qs]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate question ids: {', '.join(dup)}")
        return qs

    @field_validator("kinds")
    @classmethod
    def _not_builtin(cls, kinds: dict[str, Kind]) -> dict[str, Kind]:
        if NUMBER in kinds:
            raise ValueError(f"{NUMBER!r} is built in")
        return kinds

    @model_validator(mode="after")
    def _consistent(self):
        ids = [q.id for q in self.questions] + [g.id for g in self.gates]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"gate ids must differ from each other and from question ids: {', '.join(dup)}")
        known = {NUMBER, *self.kinds}
        for q in self.questions:
            for f in q.facts:
                if f.kind is not None and f.kind not in known:
                    raise ValueError(f"{q.id}: fact {f.fact!r}: unknown kind {f.kind!r} (known: {sorted(known)})")
        return self

    def fact_kind(self, q: Question, f: Fact) -> str | None:
        """The fact's kind: declared, else what its pattern matches in the ground truth (a number, or a value
        of a declared kind), else None (its answers are not counted)."""
        if f.kind is not None:
            return f.kind
        if not f.pattern:
            return None
        m = re.search(f.pattern, q.answer if isinstance(q.answer, str) else "", re.I) or re.search(
            f.pattern, f.fact, re.I)
        if m is None:
            return None
        if _NUMBER.search(m.group(0)):
            return NUMBER
        for name, k in self.kinds.items():
            if k.regex().search(m.group(0)):
                return name
        return None


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


# --- the rubric and the qa block ------------------------------------------------------------------------

def synthesized_rubric(qs: Questions, task_id: str) -> dict:
    """The declared gates (root leaves, ``"gate": true``), then one equally weighted leaf per question."""
    leaves: list[dict[str, Any]] = []
    for g in qs.gates:
        leaves.append({"id": g.id, "weight": g.weight, "task_category": g.task_category, "title": g.title,
                       "requirements": g.requirements, "gate": True, "check": dict(g.check),
                       "evidence_inputs": g.evidence_inputs or [{"path": qs.answers}]})
    for q in qs.questions:
        leaf: dict[str, Any] = {"id": q.id, "weight": 1, "task_category": q.phase, "title": q.question[:120],
                                "requirements": q.question, "evidence_inputs": [{"path": qs.answers}]}
        if q.type == "mcq":
            leaf["check"] = {"kind": "mcq", "path": qs.answers, "question": q.id, "answer": sorted(letters(q.answer))}
        elif q.deterministic:
            facts_ = [{**f.model_dump(exclude_none=True), **({"kind": k} if (k := qs.fact_kind(q, f)) else {})}
                      for f in q.facts]
            used = {f["kind"] for f in facts_ if f.get("kind") in qs.kinds}
            leaf["check"] = {"kind": "facts", "path": qs.answers, "question": q.id, "facts": facts_,
                             "question_text": q.question,
                             "kinds": {k: qs.kinds[k].model_dump(exclude_defaults=True) for k in sorted(used)}}
            leaf["scale"] = "continuous"
        else:
            leaf.update(method="judge", scale="continuous", facts=[f.fact for f in q.facts], answer_key=q.id,
                        judge_notes=f"Ground-truth answer: {q.answer}\nAtomic facts of the ground truth:\n"
                        + "\n".join(f"F{i + 1}. {f.fact}" for i, f in enumerate(q.facts)))
        leaves.append(leaf)
    gated = " Every question scores 0 unless the gates " + ", ".join(g.id for g in qs.gates) + " pass." \
        if qs.gates else ""
    return {"id": task_id, "requirements": "Answer the questions from an analysis of the data." + gated,
            "sub_tasks": leaves}


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
    gated = {lf.id for lf in leaves if lf.status == "gated"}  # a gated answer counts as unanswered
    pairs = [(set() if q.id in gated else letters(answers.get(q.id)), letters(q.answer))
             for q in qs.questions if q.type == "mcq"]
    oeq_ids = sorted(q.id for q in qs.questions if q.type == "oeq")
    return {**mcq_metrics(pairs), **oeq_summary(leaves, oeq_ids), "oeq_ids": oeq_ids, "answers_file": qs.answers,
            "rating_rules": RATING_RULES}
