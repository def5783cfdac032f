"""The declared cross-validation, re-run by the scorer (PRIVATE; runs in the task's environment, confined).

The labels of WDBC are public (they ship with scikit-learn), so a file of "out-of-fold predictions" proves
nothing by itself: the labels, the labels with a few errors, training-set predictions or a per-sample
pick among many models all look like a strong classifier. The submission therefore declares, per
instance in metrics.json, the scikit-learn estimator (``estimator``: an expression over scikit-learn
class names with literal arguments), the folds (``cv``: ``KFold``/``StratifiedKFold`` with 10 splits)
and the feature columns (``features``); the scorer rebuilds them here, without running any of the
submission's code, re-runs ``cross_val_predict`` on the data set and accepts the predictions only if
they are that cross-validation's out-of-fold predictions (at least ``min_agreement`` of the samples).

Used twice: the rubric's gate V1 (``declared_model_refit``, a ``recompute`` check) and the hidden
evaluator (``tests/evaluator.py`` imports :func:`verify` from this file beside it), which scores the
accuracy of verified predictions only.
"""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

INSTANCES = ("all-features", "three-features")
THREE = ("worst area", "worst smoothness", "mean texture")
FORBIDDEN_KWARGS = frozenset({"memory", "n_jobs", "pre_dispatch"})  # file caches (pickles), worker processes
MAX_EXPR = 4000
MIN_AGREEMENT = 0.995  # a deterministic refit reproduces all 569; this leaves 2 for platform-level ties


class Rejected(ValueError):
    """What the submission declared cannot be rebuilt or re-run, or does not reproduce its predictions."""


def _namespace() -> dict:
    from sklearn import model_selection, pipeline
    from sklearn.utils import all_estimators

    names = {n: c for n, c in all_estimators(type_filter=["classifier", "transformer"])}
    names.update({"make_pipeline": pipeline.make_pipeline, "Pipeline": pipeline.Pipeline,
                  "make_union": pipeline.make_union, "FeatureUnion": pipeline.FeatureUnion,
                  "GridSearchCV": model_selection.GridSearchCV})
    return names


def build(expr: str, names: dict):
    """The object an expression such as ``make_pipeline(StandardScaler(), LogisticRegression(C=0.5))`` builds:
    calls of whitelisted names with literal arguments only (no attribute access, variables or code)."""
    if not isinstance(expr, str) or not expr.strip() or len(expr) > MAX_EXPR:
        raise Rejected(f"not an expression: {str(expr)[:80]!r}")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise Rejected(f"{expr[:80]!r}: {exc.msg}") from None

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = value(node.operand)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [value(e) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Dict) and None not in node.keys:
            return {value(k): value(v) for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            kwargs = {}
            for kw in node.keywords:
                if kw.arg is None or kw.arg in FORBIDDEN_KWARGS:
                    raise Rejected(f"argument {kw.arg or '**'} of {node.func.id} is not allowed")
                kwargs[kw.arg] = value(kw.value)
            try:
                return names[node.func.id](*[value(a) for a in node.args], **kwargs)
            except Rejected:
                raise
            except Exception as exc:  # scikit-learn rejecting the arguments
                raise Rejected(f"{node.func.id}(...): {type(exc).__name__}: {exc}") from None
        what = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else type(node).__name__
        raise Rejected(f"{what!r} is not a scikit-learn estimator or a literal")

    return value(tree.body)


def _labels(refs: Path) -> list[int]:
    with open(refs / "labels.csv") as fh:
        rows = {int(r["sample"]): r["diagnosis"] for r in csv.DictReader(fh)}
    return [1 if rows[i] == "B" else 0 for i in range(len(rows))]


def read_predictions(path: Path, n: int) -> list[int]:
    """0/1 (M/B) per sample 0..n-1 from ``sample,diagnosis``; Rejected when incomplete or malformed."""
    if not path.is_file():
        raise FileNotFoundError(path.name)
    if path.stat().st_size > 1 << 20:
        raise Rejected(f"{path.name}: larger than 1 MB")
    try:
        with open(path, newline="") as fh:
            got = {int(r["sample"]): str(r["diagnosis"]).strip().upper() for r in csv.DictReader(fh)}
    except (KeyError, ValueError, TypeError, csv.Error, UnicodeDecodeError) as exc:
        raise Rejected(f"unreadable predictions: {exc}") from None
    if set(got) != set(range(n)) or not set(got.values()) <= {"M", "B"}:
        raise Rejected(f"predictions must cover samples 0..{n - 1} with M or B")
    return [1 if got[i] == "B" else 0 for i in range(n)]


def verify(evidence: Path, refs: Path, instance: str, min_agreement: float = MIN_AGREEMENT) -> dict:
    """Re-run the cross-validation ``instance`` declares; ``{"predictions", "agreement", "note"}`` when its
    out-of-fold predictions are the submitted ones. Raises FileNotFoundError (no predictions) or Rejected."""
    import numpy as np
    from sklearn.base import is_classifier
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

    results = Path(evidence) / "submission" / "results"
    data = load_breast_cancer()
    y = np.array(_labels(refs))
    if not np.array_equal(y, data.target):
        raise RuntimeError("refs/labels.csv does not match scikit-learn's data set")  # the task's fault
    pred = np.array(read_predictions(results / instance / "predictions.csv", len(y)))
    try:
        metrics = json.loads((results / "metrics.json").read_text())
        decl = metrics[instance]
        expr, cv_expr, features = decl["estimator"], decl["cv"], decl["features"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise Rejected(f"metrics.json does not declare {instance}'s estimator, cv and features ({exc})") from None
    names = list(data.feature_names)
    allowed = set(THREE) if instance == "three-features" else set(names)
    if (not isinstance(features, list) or not features or len(set(map(str, features))) != len(features)
            or not set(map(str, features)) <= allowed):
        raise Rejected(f"features {str(features)[:200]}: need distinct names among "
                       f"{'the three allowed' if instance == 'three-features' else 'the 30 feature names'}")
    ns = _namespace()
    model = build(expr, ns)
    if not is_classifier(model):
        raise Rejected(f"{expr[:120]!r} does not build a classifier")
    cv = build(cv_expr, {"KFold": KFold, "StratifiedKFold": StratifiedKFold})
    if not isinstance(cv, (KFold, StratifiedKFold)) or cv.get_n_splits() != 10:
        raise Rejected(f"cv {cv_expr[:120]!r}: need KFold or StratifiedKFold with n_splits=10")
    cols = [names.index(str(f)) for f in features]
    try:
        refit = cross_val_predict(model, data.data[:, cols], y, cv=cv)
    except Exception as exc:  # the declared model failing on the data is the submission's
        raise Rejected(f"the declared cross-validation failed: {type(exc).__name__}: {str(exc)[:200]}") from None
    agreement = float(np.mean(refit == pred))
    note = (f"{expr[:160]} on {len(cols)} feature(s), {cv_expr[:100]}: re-run out-of-fold "
            f"predictions agree with the submitted ones on {agreement:.2%} of {len(y)} samples "
            f"(re-run accuracy {np.mean(refit == y):.2%}, submitted {np.mean(pred == y):.2%})")
    if agreement < min_agreement:
        raise Rejected(note + f"; need {min_agreement:.1%}: these are not the declared model's out-of-fold "
                              "predictions")
    return {"predictions": pred.tolist(), "agreement": agreement, "note": note}


def declared_model_refit(evidence: Path, min_agreement: float = MIN_AGREEMENT) -> dict:
    """Gate: at least one instance has predictions, and every instance that has them is verified."""
    refs = Path(__file__).parent / "refs"
    notes, ok, seen = [], True, 0
    for instance in INSTANCES:
        try:
            notes.append(f"{instance}: " + verify(evidence, refs, instance, min_agreement)["note"])
            seen += 1
        except FileNotFoundError:
            continue
        except Rejected as exc:
            seen += 1
            ok = False
            notes.append(f"{instance}: {exc}")
    if not seen:
        return {"score": 0.0, "rationale": "fail: no predictions.csv to re-run"}
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + "; ".join(notes),
            "refs": ["submission/results/metrics.json"]
            + [f"submission/results/{i}/predictions.csv" for i in INSTANCES]}
