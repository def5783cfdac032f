"""The three rubric phases and the category names that map to them.

PaperBenchX leaves say Modeling / Execution / Validation; OpenAI PaperBench leaves say
Code Development / Code Execution / Result Analysis. Both map to the same three phases.
"""

from __future__ import annotations

PHASES = ("modeling", "execution", "validation")

_ALIASES = {
    "modeling": "modeling",
    "modelling": "modeling",
    "code development": "modeling",
    "execution": "execution",
    "code execution": "execution",
    "validation": "validation",
    "result analysis": "validation",
}


def phase_of(category: str | None) -> str | None:
    """The phase for a task_category, or None when the category is unknown or absent."""
    if category is None:
        return None
    return _ALIASES.get(" ".join(str(category).strip().lower().replace("_", " ").split()))


def known_categories() -> str:
    return "Modeling, Execution, Validation (or Code Development, Code Execution, Result Analysis)"
