"""Stage 4: expert review of leaves: the reviewer widget, append-only review records, reviewer agreement,
disputes and adjudication, and agreement statistics (judge vs expert, expert vs expert).

Final leaf score precedence: adjudication > expert review > judge or check (see :mod:`.records`).
Names are imported on first use, so a light reader (the confined previews) imports no database or widgets.
"""

from importlib import import_module

_NAMES = {"Reviewer": ".widget", "awaiting_review": ".awaiting", "agreement": ".consensus", "disputes": ".consensus",
          "set_reviewers_required": ".consensus", "record_review": ".records", "rescore_from_reviews": ".records",
          "reviewers_required": ".records", "query_selection": ".widget", "open_reviewer": ".widget"}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name not in _NAMES:
        raise AttributeError(name)
    return getattr(import_module(_NAMES[name], __name__), name)
