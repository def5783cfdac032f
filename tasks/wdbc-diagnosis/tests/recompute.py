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

Secret inputs (``inputs.json``, task.toml ``[metadata.replay.secret_inputs]``): the fold seed ``cv_seed``
(the declared ``cv`` must be ``KFold``/``StratifiedKFold(n_splits=10, shuffle=True, random_state=cv_seed)``)
and the rows left out, ``exclude``. The public replay gets ``{"cv_seed": 0, "exclude": []}``; a second
replay gets a drawn seed and 20-80 drawn rows (tests/secret_inputs.py), so predictions cached from the
public folds, or a fold seed shopped for its luck, cannot follow. Both replays are verified here.

The scorer scores its own computation: ``verify`` re-runs the declared cross-validation on the data
perturbed by a relative jitter of 1e-9 drawn per scoring (``seed``; the evaluator draws its own), compares
the submitted predictions with it (>= 99.5 %) and returns the RE-RUN's predictions, whose accuracy is what
counts. Honest models' out-of-fold predictions do not move under that jitter (measured: logistic
regression, SVC, k-NN, random forest, gradient boosting, MLP: 0 of 569 changed); a declaration that looks
samples up by their exact feature values (an encoder's ``categories``, an imputer's ``missing_values``)
loses its lookup. Estimators whose parameters are matched against raw feature values
(``DATA_MATCHING``) are refused outright, and a declaration holds at most ``MAX_NUMBERS`` numbers:
the labels are public, and a declaration must not carry them.
"""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

INSTANCES = ("all-features", "three-features")
THREE = ("worst area", "worst smoothness", "mean texture")
FORBIDDEN_KWARGS = frozenset({"memory", "n_jobs", "pre_dispatch"})  # file caches (pickles), worker processes
MAX_EXPR = 2000
MAX_NUMBERS = 100  # numeric literals in one declaration (a grid of hyperparameters needs a few dozen)
# estimators whose parameters are compared with raw feature values: a list of a few samples' exact values
# (categories, missing_values) or thresholds around them (Binarizer, spline knots, a dictionary of samples)
# turns a declaration into a lookup of the public labels; WDBC has no categorical or missing values.
DATA_MATCHING = frozenset({"Binarizer", "OneHotEncoder", "OrdinalEncoder", "TargetEncoder", "SimpleImputer",
                           "MissingIndicator", "KNNImputer", "IterativeImputer", "SplineTransformer",
                           "SparseCoder", "FunctionTransformer", "LabelBinarizer", "LabelEncoder",
                           "MultiLabelBinarizer", "DictVectorizer", "FeatureHasher", "HashingVectorizer",
                           "CountVectorizer", "TfidfVectorizer", "TfidfTransformer", "PatchExtractor"})
MIN_AGREEMENT = 0.995  # a deterministic refit reproduces all 569; this leaves 2 for platform-level ties
JITTER = 1e-9  # relative, per feature value, drawn per scoring: moves no honest prediction (see above)
N_SAMPLES = 569
MAX_EXCLUDE = 200
REPLAYS = {"public": "", "secret": "secret/"}
INPUTS = "inputs.json"


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
        raise Rejected(f"not an expression of at most {MAX_EXPR} characters: {str(expr)[:80]!r}")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise Rejected(f"{expr[:80]!r}: {exc.msg}") from None
    numbers = sum(isinstance(n, ast.Constant) and isinstance(n.value, int | float) and not isinstance(n.value, bool)
                  for n in ast.walk(tree))
    if numbers > MAX_NUMBERS:
        raise Rejected(f"the declaration holds {numbers} numbers (at most {MAX_NUMBERS}): a declaration names a "
                       "model and its hyperparameters, it does not carry data")
    matching = sorted({n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                       and n.func.id in DATA_MATCHING})
    if matching:
        raise Rejected(f"{', '.join(matching)}: estimators matched against raw feature values are not allowed "
                       "(WDBC has no categorical or missing values; such parameters can look samples up)")

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


def read_inputs(evidence: Path, replay: str) -> dict:
    """The inputs a replay got (``replay/input/inputs.json``, ``secret/replay/input/inputs.json``): ``cv_seed``
    and the sorted rows ``used`` (all rows but ``exclude``). The workbench wrote the file: a malformed one is
    the task's fault (RuntimeError), a missing secret one means the secret replay did not run."""
    path = Path(evidence) / f"{REPLAYS[replay]}replay" / "input" / INPUTS
    if not path.is_file():
        raise FileNotFoundError(f"{REPLAYS[replay]}replay/input/{INPUTS}")
    d = json.loads(path.read_text())
    seed, exclude = d.get("cv_seed"), d.get("exclude")
    if (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32 or not isinstance(exclude, list)
            or len(exclude) > MAX_EXCLUDE or len(set(exclude)) != len(exclude)
            or not all(isinstance(e, int) and 0 <= e < N_SAMPLES for e in exclude)):
        raise RuntimeError(f"{path}: not the task's inputs ({str(d)[:200]})")
    drop = set(exclude)
    return {"cv_seed": seed, "used": [i for i in range(N_SAMPLES) if i not in drop]}


def read_predictions(path: Path, used: list[int]) -> list[int]:
    """0/1 (M/B) per used sample (in order) from ``sample,diagnosis``; Rejected when incomplete or malformed."""
    if not path.is_file():
        raise FileNotFoundError(path.name)
    if path.stat().st_size > 1 << 20:
        raise Rejected(f"{path.name}: larger than 1 MB")
    try:
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames != ["sample", "diagnosis"]:
                raise Rejected(f"{path.name}: the header must be sample,diagnosis")
            rows = [(int(r["sample"]), str(r["diagnosis"]).strip().upper()) for r in reader]
    except (KeyError, ValueError, TypeError, csv.Error, UnicodeDecodeError) as exc:
        raise Rejected(f"unreadable predictions: {exc}") from None
    got = dict(rows)
    if len(got) != len(rows) or set(got) != set(used) or not set(got.values()) <= {"M", "B"}:
        raise Rejected(f"predictions must cover exactly the {len(used)} samples the inputs use, once each, "
                       "with M or B")
    return [1 if got[i] == "B" else 0 for i in used]


def verify(evidence: Path, refs: Path, instance: str, replay: str = "public", seed: int | None = None,
           min_agreement: float = MIN_AGREEMENT) -> dict:
    """Re-run the cross-validation ``instance`` declares in ``replay`` (its inputs: fold seed and rows) on the
    data jittered by ``JITTER`` (drawn from ``seed``, or from the OS); ``{"refit", "y", "agreement", "note"}``
    when its out-of-fold predictions are the submitted ones. ``refit`` (the scorer's own predictions) is
    what is scored. Raises FileNotFoundError (no predictions) or Rejected."""
    import numpy as np
    from sklearn.base import is_classifier
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

    base = Path(evidence) / f"{REPLAYS[replay]}submission" / "results"
    data = load_breast_cancer()
    y_all = np.array(_labels(refs))
    if not np.array_equal(y_all, data.target) or len(y_all) != N_SAMPLES:
        raise RuntimeError("refs/labels.csv does not match scikit-learn's data set")  # the task's fault
    inputs = read_inputs(evidence, replay)
    used = np.array(inputs["used"])
    y = y_all[used]
    pred = np.array(read_predictions(base / instance / "predictions.csv", inputs["used"]))
    try:
        metrics = json.loads((base / "metrics.json").read_text())
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
    if not cv.shuffle or cv.random_state != inputs["cv_seed"]:
        raise Rejected(f"cv {cv_expr[:120]!r}: the folds must be shuffled with random_state = the inputs' cv_seed "
                       f"({inputs['cv_seed']})")
    cols = [names.index(str(f)) for f in features]
    rng = np.random.default_rng(seed)
    X = data.data[used][:, cols]
    X = X * (1.0 + JITTER * rng.uniform(-1.0, 1.0, X.shape))
    try:
        refit = cross_val_predict(model, X, y, cv=cv)
    except Exception as exc:  # the declared model failing on the data is the submission's
        raise Rejected(f"the declared cross-validation failed: {type(exc).__name__}: {str(exc)[:200]}") from None
    agreement = float(np.mean(refit == pred))
    note = (f"[{replay} replay: cv_seed {inputs['cv_seed']}, {len(used)} samples] {expr[:160]} on {len(cols)} "
            f"feature(s), {cv_expr[:100]}: the scorer's out-of-fold predictions agree with the submitted ones "
            f"on {agreement:.2%} (scorer's accuracy {np.mean(refit == y):.2%}, submitted {np.mean(pred == y):.2%})")
    if agreement < min_agreement:
        raise Rejected(note + f"; need {min_agreement:.1%}: these are not the declared model's out-of-fold "
                              "predictions")
    return {"refit": refit.tolist(), "y": y.tolist(), "agreement": agreement, "note": note}


def declared_model_refit(evidence: Path, seed: int, min_agreement: float = MIN_AGREEMENT) -> dict:
    """Gate: both replays (public and secret inputs) have predictions for the same instances, at least one,
    and every one is verified (the scorer's re-run on its own jittered data, seeded per scoring)."""
    refs = Path(__file__).parent / "refs"
    notes, ok, seen = [], True, {}
    for replay in REPLAYS:
        seen[replay] = []
        for instance in INSTANCES:
            try:
                notes.append(f"{instance}: " + verify(evidence, refs, instance, replay, seed + len(notes),
                                                      min_agreement)["note"])
                seen[replay].append(instance)
            except FileNotFoundError as exc:
                if replay == "secret" and instance in seen["public"]:
                    ok = False
                    notes.append(f"{instance} [secret replay]: missing ({exc})")
            except Rejected as exc:
                seen[replay].append(instance)
                ok = False
                notes.append(f"{instance}: {exc}")
    if not seen["public"]:
        return {"score": 0.0, "rationale": "fail: no predictions.csv to re-run"}
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + "; ".join(notes),
            "refs": ["submission/results/metrics.json", "secret/submission/results/metrics.json"]
            + [f"{r}submission/results/{i}/predictions.csv" for r in REPLAYS.values() for i in INSTANCES]}
