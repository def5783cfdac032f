"""Hidden evaluator (NatureBench contract): run_evaluation() -> {instance: {metric: value}}.

Accuracy in percent of each instance's out-of-fold predictions against the private labels, counted only
when the predictions are what they claim to be: the scorer rebuilds the estimator, folds and features
metrics.json declares and re-runs that 10-fold cross-validation itself (``verify`` in recompute.py beside
this file; none of the submission's code runs). The labels are public, so predictions that are the labels,
training-set predictions or a per-sample pick among many models get ``accuracy: None`` with the reason
(the failure floor g = -1), as does a missing or malformed prediction file.
"""

import importlib.util
from pathlib import Path

INSTANCES = ("all-features", "three-features")


def _verifier():
    spec = importlib.util.spec_from_file_location("wdbc_recompute", Path(__file__).with_name("recompute.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_evaluation(evidence_dir=".", refs_dir=None) -> dict:
    evidence = Path(evidence_dir)
    refs = Path(refs_dir) if refs_dir else Path(__file__).parent / "refs"
    v = _verifier()
    truth = v._labels(refs)
    out = {}
    for instance in INSTANCES:
        try:
            checked = v.verify(evidence, refs, instance)
        except FileNotFoundError:
            out[instance] = {"accuracy": None, "error": "predictions.csv missing"}
            continue
        except v.Rejected as exc:
            out[instance] = {"accuracy": None, "error": str(exc)[:480]}
            continue
        pred = checked["predictions"]
        out[instance] = {"accuracy": 100.0 * sum(p == t for p, t in zip(pred, truth, strict=True)) / len(truth),
                         "n": len(truth), "refit_agreement": checked["agreement"]}
    return out
