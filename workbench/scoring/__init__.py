"""Stage 3: scoring frozen evidence: deterministic checks, the LLM judge, and the rubric, sota and qa modes."""

from . import qa, sota  # noqa: F401  (qa registers its check kinds)
from .checks import CHECK_KINDS, CheckOutcome, load_task_checks, parse_spec, run_check, task_check
from .results import LeafScore, Scores
from .rubric_scorer import score_trial

__all__ = ["CHECK_KINDS", "CheckOutcome", "LeafScore", "Scores", "load_task_checks", "parse_spec",
           "run_check", "score_trial", "task_check"]
