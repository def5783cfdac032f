"""Out-of-fold WDBC diagnoses by stratified 10-fold cross-validation, for both instances.

Reads inputs.json (the task's contract): ``cv_seed`` seeds the shuffled folds, ``exclude`` lists rows
left out; predictions cover the other rows, by their row index in the data set."""

import json
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

THREE = ["worst area", "worst smoothness", "mean texture"]
inputs = json.loads(Path("inputs.json").read_text())
seed, exclude = int(inputs["cv_seed"]), set(inputs["exclude"])
# what metrics.json declares, so the evaluator can re-run exactly this cross-validation
ESTIMATOR = "make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))"
CV = f"StratifiedKFold(n_splits=10, shuffle=True, random_state={seed})"

data = load_breast_cancer()
names = list(data.feature_names)
used = np.array([i for i in range(len(data.target)) if i not in exclude])
X, y = data.data[used], data.target[used]
cv = StratifiedKFold(n_splits=10, shuffle=True, random_state=seed)
metrics = {}
instances = {"all-features": names, "three-features": THREE}
for instance, features in instances.items():
    cols = [names.index(f) for f in features]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    pred = cross_val_predict(model, X[:, cols], y, cv=cv)
    out = Path("results") / instance
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "predictions.csv", "w") as fh:
        fh.write("sample,diagnosis\n")
        fh.writelines(f"{i},{'B' if p == 1 else 'M'}\n" for i, p in zip(used, pred, strict=True))
    acc = 100.0 * float(np.mean(pred == y))
    metrics[instance] = {"accuracy": round(acc, 3), "folds": 10, "n_features": len(cols),
                         "features": [str(f) for f in features], "estimator": ESTIMATOR, "cv": CV}
    print(f"{instance}: {len(cols)} features, {len(used)} samples, 10-fold accuracy {acc:.2f} % (cv_seed {seed})")
Path("results/metrics.json").write_text(json.dumps(metrics, indent=2))
