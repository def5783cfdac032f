"""Small sota and qa task packages for tests (host /usr, no install.sh)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write_task

EVALUATOR = '''
import json
from pathlib import Path


def run_evaluation(evidence_dir=".", refs_dir=None):
    p = Path(evidence_dir) / "submission" / "results" / "pred.json"
    if not p.is_file():
        return {"a": {"score": None, "error": "no pred.json"}, "b": {"score": None, "error": "no pred.json"}}
    pred = json.loads(p.read_text())
    truth = json.loads((Path(refs_dir) / "truth.json").read_text())
    return {"a": {"score": pred.get("a", 0) * truth["scale"]}, "b": {"score": pred.get("b")}}
'''

SOLUTION = 'mkdir -p results\necho \'{"a": 10.5, "b": 1.5}\' > results/pred.json\n'


def write_sota_task(root: Path, *, evaluator: str = EVALUATOR, sota_a: str = "10 ± 1") -> Path:
    """Instances a (higher is better, SOTA "10 ± 1") and b (lower is better, SOTA 2.0); the solution
    gives g_a = 0.05 (match), g_b = 0.25 (surpass), task g = 0.15 (surpass)."""
    write_task(root)
    (root / "tests" / "rubric.json").unlink()
    toml = (root / "task.toml").read_text().replace('paper = "none"', 'paper = "none"\nscoring = "sota"')
    (root / "task.toml").write_text(toml)
    (root / "tests" / "evaluator.py").write_text(evaluator)
    (root / "tests" / "refs").mkdir()
    (root / "tests" / "refs" / "truth.json").write_text('{"scale": 1.0}')
    (root / "tests" / "sota.json").write_text(json.dumps({"instances": {
        "a": {"metric": "score", "direction": "higher_is_better", "sota": sota_a},
        "b": {"metric": "score", "direction": "lower_is_better", "sota": "2.0"}}}))
    (root / "solution" / "reproduce.sh").write_text(SOLUTION)
    return root


QUESTIONS = {
    "questions": [
        {"id": "m1", "type": "mcq", "question": "Which?", "options": {"A": "x", "B": "y", "C": "z"},
         "answer": ["A", "C"]},
        {"id": "m2", "type": "mcq", "question": "Which one?", "options": {"A": "x", "B": "y"}, "answer": ["B"]},
        {"id": "o1", "type": "oeq", "question": "How many cells?", "answer": "700 cells in 10 populations",
         "facts": [{"fact": "700 cells", "pattern": "\\b700\\b"}, {"fact": "10 populations", "pattern": "\\b10\\b"}]},
        {"id": "o2", "type": "oeq", "question": "What marks NK cells?", "answer": "NKG7 and GNLY, with GZMB",
         "facts": [{"fact": "NKG7"}, {"fact": "GNLY"}, {"fact": "GZMB"}]},
    ]}


def write_qa_task(root: Path, answers: dict) -> Path:
    """Two MCQs, one OEQ with fact patterns (deterministic) and one for the judge; the solution writes
    ``answers`` to results/answers.json."""
    write_task(root)
    (root / "tests" / "rubric.json").unlink()
    toml = (root / "task.toml").read_text().replace('paper = "none"', 'paper = "none"\nscoring = "qa"')
    (root / "task.toml").write_text(toml)
    (root / "tests" / "questions.json").write_text(json.dumps(QUESTIONS))
    (root / "instruction.md").write_text("Answer m1, m2, o1 and o2 in results/answers.json.\n")
    (root / "solution" / "reproduce.sh").write_text(
        f"mkdir -p results\ncat > results/answers.json <<'EOF'\n{json.dumps(answers)}\nEOF\n")
    return root
