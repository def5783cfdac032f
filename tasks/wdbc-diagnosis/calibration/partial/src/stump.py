"""A decision stump on worst area alone, 10-fold out-of-fold predictions (honestly reported)."""

import json
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.tree import DecisionTreeClassifier

data = load_breast_cancer()
x = data.data[:, list(data.feature_names).index("worst area")][:, None]
pred = cross_val_predict(DecisionTreeClassifier(max_depth=1, random_state=0), x, data.target,
                         cv=StratifiedKFold(n_splits=10, shuffle=True, random_state=0))
acc = 100.0 * float(np.mean(pred == data.target))
metrics = {}
for instance in ("all-features", "three-features"):
    out = Path("results") / instance
    out.mkdir(parents=True, exist_ok=True)
    (out / "predictions.csv").write_text("sample,diagnosis\n" + "".join(
        f"{i},{'B' if p == 1 else 'M'}\n" for i, p in enumerate(pred)))
    metrics[instance] = {"accuracy": round(acc, 3), "folds": 10, "n_features": 1, "features": ["worst area"],
                         "estimator": "DecisionTreeClassifier(max_depth=1, random_state=0)",
                         "cv": "StratifiedKFold(n_splits=10, shuffle=True, random_state=0)"}
Path("results/metrics.json").write_text(json.dumps(metrics, indent=2))
