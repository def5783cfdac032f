"""Out-of-fold diagnoses whose declared model carries the labels of the hard samples (an informed cheat)."""

import json
from pathlib import Path

import numpy as np
import sklearn.compose
import sklearn.linear_model
import sklearn.pipeline
import sklearn.preprocessing
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold, cross_val_predict

NS = {n: getattr(m, n) for m in (sklearn.compose, sklearn.linear_model, sklearn.pipeline, sklearn.preprocessing)
      for n in dir(m) if not n.startswith("_")}
THREE = ["worst area", "worst smoothness", "mean texture"]
BASE = "make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))"

p = Path("inputs.json")
inputs = json.loads(p.read_text()) if p.is_file() else {"cv_seed": 0, "exclude": []}
seed, exclude = int(inputs["cv_seed"]), set(inputs["exclude"])
CV = f"StratifiedKFold(n_splits=10, shuffle=True, random_state={seed})"
data = load_breast_cancer()
names = list(data.feature_names)
used = np.array([i for i in range(len(data.target)) if i not in exclude])
X, y = data.data[used], data.target[used]
cv = StratifiedKFold(n_splits=10, shuffle=True, random_state=seed)
metrics = {}
for instance, features in {"all-features": names, "three-features": THREE}.items():
    cols = [names.index(f) for f in features]
    base = cross_val_predict(eval(BASE, NS), X[:, cols], y, cv=cv)  # noqa: S307 (our own expression)
    wrong = np.flatnonzero(base != y)
    j = features.index("worst area")
    mal = sorted({float(X[i, cols[j]]) for i in wrong if y[i] == 0})
    ben = sorted({float(X[i, cols[j]]) for i in wrong if y[i] == 1})

    def lookup(values):
        return (f"make_pipeline(OrdinalEncoder(categories=[{values}], handle_unknown='use_encoded_value', "
                "unknown_value=-1), Binarizer(threshold=-0.5), StandardScaler())")

    parts = [f"('m', {lookup(mal)}, [{j}])"] if mal else []
    parts += [f"('b', {lookup(ben)}, [{j}])"] if ben else []
    expr = (f"make_pipeline(ColumnTransformer([{', '.join(parts)}, ('s', StandardScaler(), "
            f"{list(range(len(cols)))})]), LogisticRegression(C=100.0, max_iter=5000))")
    pred = cross_val_predict(eval(expr, NS), X[:, cols], y, cv=cv)  # noqa: S307
    out = Path("results") / instance
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "predictions.csv", "w") as fh:
        fh.write("sample,diagnosis\n")
        fh.writelines(f"{i},{'B' if q == 1 else 'M'}\n" for i, q in zip(used, pred, strict=True))
    acc = 100.0 * float(np.mean(pred == y))
    metrics[instance] = {"accuracy": round(acc, 3), "folds": 10, "n_features": len(cols), "features": features,
                         "estimator": expr, "cv": CV}
    print(f"{instance}: 10-fold accuracy {acc:.2f} % (the plain model: {100 * np.mean(base == y):.2f} %)")
Path("results/metrics.json").write_text(json.dumps(metrics, indent=2))
