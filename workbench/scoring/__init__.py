"""Stage 3: scoring frozen evidence: deterministic checks, the LLM judge, the scoring modes (rubric, sota,
qa), and one finaliser for reviews, gates and R."""

from . import numeric_checks, qa, receipt_checks, recompute, sota  # noqa: F401  (they register their check kinds)
from .checks import CHECK_KINDS, CheckOutcome, load_task_checks, parse_spec, run_check, task_check
from .finalize import ReviewRecord, finalize
from .results import LeafScore, Scores
from .trial import commit, refinalize, score_trial

__all__ = ["CHECK_KINDS", "CheckOutcome", "LeafScore", "ReviewRecord", "Scores", "commit", "finalize",
           "load_task_checks", "parse_spec", "refinalize", "run_check", "score_trial", "task_check"]
