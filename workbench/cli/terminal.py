"""Text views for a terminal (the CLI's tables), as :mod:`workbench.trial.displays` holds the notebooks' views.

A rationale, a comment or a reviewer's name is text a submission or a judge may influence. Before it
reaches a terminal it is made one clean line (:func:`one_line`): escape sequences and control
characters are removed, so ``ESC[2J`` cannot clear the screen or rewrite earlier rows, and newlines
collapse, so every row is one line.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Sequence

from ..rubric import PHASES

# ESC followed by a CSI sequence, an OSC/DCS/PM/APC string (to BEL or ST), or any other single character
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|.?)", re.DOTALL)
DEFAULT_WIDTH = 80


def terminal_width() -> int:
    """The terminal's width in columns (80 when the output is not a terminal)."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def one_line(text: object, width: int | None = None) -> str:
    """``text`` as one printable line: escapes and control characters gone, whitespace runs collapsed,
    cut to ``width`` characters (ending in "…") when longer."""
    text = _ESCAPE.sub("", str(text))
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    if width is not None and len(text) > width:
        text = text[:max(width - 1, 0)] + "…"
    return text


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], width: int | None = None,
          right: Sequence[str] = ()) -> list[str]:
    """Rows under their headers in aligned columns; every cell is one clean line, and the last column
    is cut so that no line is wider than ``width`` (the terminal's by default)."""
    width = width or terminal_width()
    cells = [[one_line(c) for c in row] for row in rows]
    fixed = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers[:-1])]
    last = max(width - sum(w + 2 for w in fixed), 12)

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if h in right else v.ljust(w) for v, w, h in zip(values, fixed, headers, strict=False)]
        return "  ".join([*parts, one_line(values[-1], last)]).rstrip()

    return [line(list(headers)), *(line(r) for r in cells)]


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def leaf_table(scores, width: int | None = None) -> list[str]:
    """The leaves of a scored trial, by phase then in rubric order: id, phase, status, score and the
    first line's worth of the rationale (``run --leaves``, ``score --leaves``)."""
    order = {p: i for i, p in enumerate(PHASES)}
    leaves = sorted(scores.leaves, key=lambda lf: order.get(lf.phase, len(order)))
    rows = [(lf.id, lf.phase, lf.status, _score(lf.score), lf.rationale or lf.error or "") for lf in leaves]
    return table(("id", "phase", "status", "score", "rationale"), rows, width, right=("score",))


def awaiting_table(items: Sequence[dict], width: int | None = None) -> list[str]:
    """Leaves awaiting review (:func:`workbench.review.awaiting.awaiting_review`), one line each, and a
    count line; "no leaves await review" when there are none."""
    if not items:
        return ["no leaves await review"]
    rows = [(i["trial"], i["leaf"], i["phase"], f"{i['effective_weight']:.4f}", i["why"]) for i in items]
    trials = len({i["trial"] for i in items})
    count = (f"{len(items)} {'leaf awaits' if len(items) == 1 else 'leaves await'} review in {trials} "
             f"trial{'' if trials == 1 else 's'}")
    return [*table(("trial", "leaf", "phase", "weight", "awaits"), rows, width, right=("weight",)), count]


def score_lines(scores, rescore: str | None = None, leaves: bool = False) -> list[str]:
    """A scored trial for `run` and `score`: R with both phase quantities, leaf counts by status, the
    judge's usage, withheld leaves with their causes (and ``rescore``, the command that rescores them),
    and with ``leaves`` the leaf table."""
    ph, weights = scores.phases, scores.phase_weights

    def phase(p: str) -> str:
        e, w = ph.get(p, 0.0), weights.get(p, 0.0)
        return f"{p} {e:.3f} of {w:.3f}" + (f" ({e / w:.0%})" if w else "")

    out = [f"R = {scores.R:.4f}  full = {str(scores.full).lower()}  coverage = {scores.coverage:.3f}",
           "phases, weight earned of the phase's weight (share): " + ", ".join(phase(p) for p in PHASES)]
    counts = Counter(lf.status for lf in scores.leaves)
    out.append("leaves: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    u = scores.judge_usage
    if u.get("leaves"):
        cost = f", ${u['cost_usd']:.4f}" if u.get("cost_usd") is not None else ""
        out.append(f"judge: {u['leaves']} leaves ({u['cached']} from cache), {u['calls_made']} model calls, "
                   f"{u['prompt_tokens'] + u['completion_tokens']} tokens{cost}"
                   + (f", {u['invalid_replies']} invalid replies re-asked" if u.get("invalid_replies") else ""))
    out += [f"judge fingerprint changed: {change}" for change in scores.fingerprint_changes]
    withheld = [lf for lf in scores.leaves if lf.status == "withheld"]
    if withheld:  # the judge or task code failed, not the submission: say why, and that it is not final
        causes = sorted({one_line(lf.error or lf.rationale or "withheld", 200) for lf in withheld})
        out.append(f"withheld: {len(withheld)} leaves, left out of R until rescored: {'; '.join(causes)}")
        if rescore:
            out.append(f"this trial needs rescoring: {rescore}")
    if leaves:
        out += ["", *leaf_table(scores), ""]
    return out
