"""Stage 4: expert review of leaves: the reviewer widget, append-only review records, reviewer agreement,
disputes and adjudication, and agreement statistics (judge vs expert, expert vs expert).

Final leaf score precedence: adjudication > expert review > judge or check (see :mod:`.records`).
"""

from .consensus import agreement, disputes, set_reviewers_required
from .records import record_review, rescore_from_reviews, reviewers_required

__all__ = ["Reviewer", "agreement", "disputes", "record_review", "rescore_from_reviews", "reviewers_required",
           "set_reviewers_required"]


def __getattr__(name: str):
    if name == "Reviewer":  # ipywidgets is imported only by those who open the reviewer
        from .widget import Reviewer

        return Reviewer
    raise AttributeError(name)
