"""Agreement between two raters of the same leaves (the judge and an expert, or two experts).

Scores are compared as binary verdicts (score >= 0.5 counts as "met"): PaperBench's JudgeEval reports
accuracy and macro F1 over binary leaves, with the expert as ground truth; Cohen's kappa corrects the
raw agreement for what chance alone would give.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..scoring.finalize import verdict


def binarize(scores: Sequence[float]) -> list[int]:
    return [verdict(s) for s in scores]


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else 1.0


def classification(truth: Sequence[int], pred: Sequence[int]) -> dict[str, float | int]:
    """Accuracy, precision/recall/F1 of "met", and macro F1 over both classes."""
    tp = sum(1 for t, p in zip(truth, pred, strict=True) if t and p)
    tn = sum(1 for t, p in zip(truth, pred, strict=True) if not t and not p)
    fp = sum(1 for t, p in zip(truth, pred, strict=True) if not t and p)
    fn = sum(1 for t, p in zip(truth, pred, strict=True) if t and not p)
    n = len(truth)
    return {"n": n, "accuracy": (tp + tn) / n if n else float("nan"),
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / (tp + fn) if tp + fn else float("nan"),
            "f1": _f1(tp, fp, fn), "macro_f1": (_f1(tp, fp, fn) + _f1(tn, fn, fp)) / 2,
            "tp": tp, "tn": tn, "fp": fp, "fn": fn}


def cohen_kappa(a: Sequence, b: Sequence) -> float:
    """Cohen's kappa for two raters' categorical labels (1.0 when both use one identical label)."""
    n = len(a)
    if n == 0:
        return float("nan")
    labels = sorted(set(a) | set(b))
    po = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    pe = sum((list(a).count(k) / n) * (list(b).count(k) / n) for k in labels)
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)
