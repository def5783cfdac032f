"""Hidden evaluator (NatureBench contract): run_evaluation() -> {instance: {metric: value}}.

Accuracy in percent of the scorer's OWN out-of-fold predictions for the SECRET replay: the second replay ran
with a fold seed and a set of left-out rows drawn for it alone (tests/secret_inputs.py), and the scorer
rebuilds the estimator, folds and features that replay's metrics.json declares and re-runs that 10-fold
cross-validation itself (``verify`` in recompute.py beside this file; none of the submission's code runs),
on data jittered by a relative 1e-9 drawn here. The accuracy counts only when the submitted predictions of
both replays are that re-run's (>= 99.5 % agreement); the accuracy is the re-run's, never the shipped file's.
The labels are public, so predictions that are the labels, training-set predictions, a per-sample pick among
many models or predictions cached for the published folds get ``accuracy: None`` with the reason (the failure
floor g = -1), as does a missing or malformed prediction file.
"""

import importlib.util
import secrets
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
    out = {}
    for instance in INSTANCES:
        try:
            public = v.verify(evidence, refs, instance, "public", secrets.randbits(63))
            checked = v.verify(evidence, refs, instance, "secret", secrets.randbits(63))
        except FileNotFoundError as exc:
            out[instance] = {"accuracy": None, "error": f"missing: {exc}"}
            continue
        except v.Rejected as exc:
            out[instance] = {"accuracy": None, "error": str(exc)[:480]}
            continue
        refit, y = checked["refit"], checked["y"]
        out[instance] = {"accuracy": 100.0 * sum(p == t for p, t in zip(refit, y, strict=True)) / len(y),
                         "n": len(y), "refit_agreement": checked["agreement"],
                         "public_accuracy": 100.0 * sum(p == t for p, t in zip(public["refit"], public["y"],
                                                                                  strict=True)) / len(public["y"])}
    return out
