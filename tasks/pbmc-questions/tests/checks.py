"""Task checks of pbmc-questions (PRIVATE).

``secret_answers`` ties every question to its own analysis. The verifier replays the package a second
time with a cell subsample it drew for this scoring alone (tests/secret_inputs.py; frozen at
``secret/replay/input/inputs.json``), and the scorer works out what each question's answer is on those
cells: from its copy of the data set's obs table (tests/refs/obs.csv, the columns the questions are
about) with :func:`refs/secret_truth.truth`, and, for the two Wilcoxon questions, from the secret replay's
table, which gate G4 recomputes itself on the same cells. Every question the public replay answered
correctly (an MCQ's exact letter set; each PRESENT fact of an open answer) must be answered correctly for
the secret cells too, under the same rules (exact letter sets; fact patterns built from the scorer's
values; the same shotgun budget). An answer typed in, cached for the 700 cells, or computed for some
questions and typed for the others fails as soon as a typed answer's truth moves with the cells (the
cell count and the phase counts move on every draw). Questions the public replay got wrong are not asked
again: they score 0 already.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import re
from pathlib import Path

from workbench.evidence import MissingEvidence
from workbench.scoring import CheckOutcome, task_check
from workbench.scoring.qa import Facts, label_facts, shotgun
from workbench.task.questions import Fact, letters, load_questions

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("pbmc_questions_secret_truth", HERE / "refs" / "secret_truth.py")
SI = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(SI)
QS = load_questions(HERE / "refs" / "questions.json")  # a copy of tests/questions.json (secret_inputs.py)
ANSWERS = "results/answers.json"
SECRET = "secret/submission/results/"
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
         10: "ten", 11: "eleven", 12: "twelve"}


def _num(n: int) -> str:
    return rf"\b({n}{'|' + WORDS[n] if n in WORDS else ''})\b"


def _pct(p: float) -> str:
    alts = {re.escape(f"{p:.1f}") + r"\d*", re.escape(f"{p:.2f}") + r"\d*", rf"{round(p)}(\.0+)?"}
    return "(?<![\\d.])(" + "|".join(sorted(alts)) + r")\s*%"


def _decimal(x: float) -> str:
    trunc2 = f"{int(x * 100) / 100:.2f}"
    alts = {re.escape(trunc2) + r"\d*", re.escape(f"{x:.2f}") + r"\b", re.escape(f"{x:.3f}") + r"\d*"}
    return "(?<![\\d.])(" + "|".join(sorted(alts)) + ")"


def _population(name: str) -> str:
    if name == "CD4+/CD45RA+/CD25- Naive T":
        return r"CD45RA\+/CD25-|naive T\b"
    return r"(?<![\w+/])" + re.escape(name) + r"(?![\w+/])"


def _top(table_csv: str, group: str, n: int = 5) -> list[str]:
    rows = [r for r in csv.DictReader(io.StringIO(table_csv)) if (r.get("group") or "").strip() == group]
    return [(r.get("names") or "").strip() for r in rows[:n]]


def secret_facts(t: dict, b_top5: list[str]) -> dict[str, list[Fact]]:
    """Each open question's facts for the secret cells (patterns built from the scorer's values)."""
    ph = t["phase"]
    return {
        "oeq1": [Fact(fact=f"{t['n_cells']} cells", pattern=_num(t["n_cells"]), kind="number",
                      incorrect_pattern="68,?000 cells"),
                 Fact(fact="765 genes", pattern=r"\b765\b", kind="number"),
                 Fact(fact=f"{t['n_pops']} FACS populations", pattern=_num(t["n_pops"]), kind="number")],
        "oeq2": [Fact(fact=f"{t['smallest']} is the smallest population", pattern=_population(t["smallest"]),
                      kind="population"),
                 Fact(fact=f"it has {t['smallest_n']} cells", pattern=_num(t["smallest_n"])[:-2] + r"\s+cells",
                      kind="number")],
        "oeq3": [Fact(fact=f"{c} cells ({p:.1f}%) in {x}", pattern=rf"{_num(c)}|{_pct(p)}", kind="number")
                 for x, (c, p) in ph.items()],
        "oeq4": [Fact(fact=g, pattern=rf"\b{re.escape(g)}\b", kind="gene") for g in b_top5],
        "oeq5": [Fact(fact="the relation is positive", pattern=r"positive|increas|more counts[^.]*more",
                      incorrect_pattern=r"negative(ly)? (correlat|relat)"),
                 Fact(fact=f"Pearson r is about {t['r']:.3f}", pattern=_decimal(t["r"]), kind="number")],
    }


def _labels(text, question, facts: list[Fact]) -> tuple[list[str], str | None]:
    if text is None:
        return ["MISSING"] * len(facts), None
    text = text if isinstance(text, str) else json.dumps(text)
    used = sorted({f.kind for f in facts if f.kind in QS.kinds})
    why = shotgun(text, Facts(path=ANSWERS, question=question.id, facts=facts, question_text=question.question,
                              kinds={k: QS.kinds[k] for k in used}))
    return (["INCORRECT"] * len(facts) if why else label_facts(text, facts)), why


def _public_facts(q) -> list[Fact]:
    return [f.model_copy(update={"kind": QS.fact_kind(q, f)}) for f in q.facts]


@task_check
def secret_answers(ev) -> CheckOutcome:
    refs = [f"submission/{ANSWERS}", f"{SECRET}answers.json", "secret/replay/input/inputs.json"]
    pub = ev.read_json(ANSWERS)
    pub = pub if isinstance(pub, dict) else {}
    raw = ev.read_json("secret/replay/input/inputs.json")
    cells = raw.get("cells") if isinstance(raw, dict) else None
    if not isinstance(cells, list) or not cells or not all(isinstance(c, str) and c in SI.OBS for c in cells):
        raise MissingEvidence("secret/replay/input/inputs.json", "not a list of the data set's cells")
    sec = ev.read_json(f"{SECRET}answers.json")
    sec = sec if isinstance(sec, dict) else {}
    t = SI.truth(cells)
    table = ev.read_text(f"{SECRET}markers.csv")
    nk_top5 = set(_top(table, "CD56+ NK"))
    t["mcq4"] = sorted(k for k, v in QS_BY_ID["mcq4"].options.items() if v in nk_top5)
    sfacts = secret_facts(t, _top(table, "CD19+ B"))
    asked, failed = [], []
    for q in QS.questions:
        if q.type == "mcq":
            if letters(pub.get(q.id)) != letters(q.answer):
                continue
            asked.append(q.id)
            got = letters(sec.get(q.id))
            if got != set(t[q.id]):
                failed.append(f"{q.id}: answered {''.join(sorted(got)) or '-'} for the secret cells, their answer "
                              f"is {''.join(t[q.id]) or '-'}")
            continue
        plabels, pwhy = _labels(pub.get(q.id), q, _public_facts(q))
        if pwhy or "PRESENT" not in plabels:
            continue
        asked.append(q.id)
        slabels, swhy = _labels(sec.get(q.id), q, sfacts[q.id])
        lost = [sf.fact for pl, sl, sf in zip(plabels, slabels, sfacts[q.id], strict=True)
                if pl == "PRESENT" and sl != "PRESENT"]
        if lost:
            failed.append(f"{q.id}: the secret answer {'is a shotgun' if swhy else 'misses'} "
                          + ("" if swhy else "; ".join(lost)))
    ok = not failed
    text = (f"{len(asked)} question(s) the public replay answered correctly, asked again for {len(cells)} secret "
            f"cells: " + ("all answered correctly" if ok else "; ".join(failed[:4]) +
                          (f" (+{len(failed) - 4} more)" if len(failed) > 4 else "")))
    return CheckOutcome(float(ok), ("pass: " if ok else "fail: ") + text, refs)


QS_BY_ID = {q.id: q for q in QS.questions}
