"""tests/questions.json (``scoring = "qa"``): the questions, their facts and gates, and the rubric they make.

The file format lives here, beside the task's other formats; how answers are scored is
:mod:`workbench.scoring.qa`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import load_json_model, unknown


def letters(answer: Any) -> set[str]:
    """An MCQ answer as a set of option letters: ["A", "C"], "A, C", "AC" or "<solution>A,C</solution>"."""
    if isinstance(answer, list | tuple | set):
        return {str(a).strip().upper() for a in answer if str(a).strip()}
    text = re.sub(r"</?solution>", " ", str(answer or "")).strip()
    if re.fullmatch(r"[A-Za-z]{1,8}", text):
        return set(text.upper())
    return {m.upper() for m in re.findall(r"\b([A-Za-z])\b", text)}


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
                    raise ValueError(f"{q.id}: fact {f.fact!r}: " + unknown("kind", f.kind, known))
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
    return load_json_model(path, Questions)


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
