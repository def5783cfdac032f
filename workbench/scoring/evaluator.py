"""Running a ``sota`` task's hidden evaluator (``tests/evaluator.py``), confined like every reader of evidence.

The evaluator runs in the task's own environment in a sandbox (:func:`workbench.reader.client.run_confined`): the
sealed evidence read-only at /evidence (the working directory is the replayed submission, as NatureBench's
evaluators with relative paths expect), the evaluator and the files beside it (``refs/``, ``ground_truth/``)
but not the workbench's scoring files, no network, the task's memory limit. Its result comes back on a
line marked with a nonce no evaluation output can forge.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from .sota import NOT_FOR_THE_EVALUATOR, EvaluationRejected, EvaluatorFailed

_RUNNER = r"""
import importlib.util, inspect, json, math, sys
def write(obj):
    sys.stdout.flush()
    sys.stdout.write("\n" + sys.argv[4] + json.dumps(obj) + "\n"); sys.stdout.flush()
try:
    spec = importlib.util.spec_from_file_location("task_evaluator", sys.argv[1])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    entry = sys.argv[5]
    fn = getattr(mod, entry)
    params = inspect.signature(fn).parameters
except BaseException as exc:
    write({"__broken__": {"type": type(exc).__name__, "message": str(exc)[:500]}})
    sys.exit(0)
try:
    if entry == "evaluate":  # a discovery evaluator: one construction, in the working directory
        res = {"result": fn(".")}
    else:
        res = fn(sys.argv[2], sys.argv[3]) if len(params) >= 2 else fn()
except BaseException as exc:
    write({"__raised__": {"type": type(exc).__name__, "message": str(exc)[:500]}})
    sys.exit(0)
def clean(v):
    if isinstance(v, bool) or v is None: return v
    try:
        if isinstance(v, (int, float)): return float(v) if math.isfinite(v) else None
        return clean(float(v))
    except (TypeError, ValueError, OverflowError): return str(v)[:200]
out = {str(i): ({str(k): clean(v) for k, v in m.items()} if isinstance(m, dict) else {"error": str(m)[:500]})
       for i, m in (res if isinstance(res, dict) else {}).items()}
write(out)
"""


def run_evaluator(evaluator: Path, evidence: Path, refs: Path, *, python: str | None = None,
                  env_dir: str | None = None, memory_mb: int = 2048, timeout: float = 600.0,
                  entry: str = "run_evaluation") -> dict[str, dict]:
    """``run_evaluation()`` of a task's evaluator, confined like every reader of evidence
    (:func:`workbench.reader.client.run_confined`): the sealed evidence read-only at /evidence, only the evaluator
    and ``tests/refs/`` of the private files, the task's environment read-only, no network, the task's
    memory limit and ``timeout``. It may take ``(evidence_dir, refs_dir)`` or nothing (NatureBench's
    evaluators use relative paths: the working directory is the replayed submission); non-finite values
    come back as None. ``entry="evaluate"``: a discovery evaluator's ``evaluate(submission_dir)``, called
    with the replayed submission; its result comes back as ``{"result": {...}}``.

    Raises :class:`EvaluatorFailed` when the evaluator cannot run at all (withheld) and
    :class:`EvaluationRejected` when it fails on the submission's files, or a limit stops it reading them
    (the submission's failure)."""
    from ..reader.client import EVIDENCE, TESTS, reader_limits, run_confined
    from ..sandbox import SandboxSetupError
    from .faults import name_is_code_fault

    evidence = Path(evidence).resolve()
    binds = {EVIDENCE: evidence, f"{TESTS}/evaluator.py": Path(evaluator).resolve()}
    # the evaluator's own companions beside it (refs/, NatureBench's ground_truth/, ...), never the
    # workbench's scoring files (rubric, task checks, judge notes, questions) it does not need
    for p in sorted(Path(evaluator).resolve().parent.iterdir()):
        if p.name not in NOT_FOR_THE_EVALUATOR and p.name != "evaluator.py" and not p.name.startswith("."):
            binds[f"{TESTS}/{p.name}"] = p
    if Path(refs).is_dir():
        binds[f"{TESTS}/refs"] = Path(refs).resolve()
    marker = f"@@workbench-result-{secrets.token_hex(8)}@@"  # a nonce: no evaluation output can forge it
    workdir = f"{EVIDENCE}/submission" if (evidence / "submission").is_dir() else EVIDENCE
    try:
        # -I: isolated, so the submission's files in the working directory (a planted csv.py or json.py) are
        # never importable by the evaluator
        done = run_confined([python or "/usr/bin/python3", "-I", "-c", _RUNNER, f"{TESTS}/evaluator.py", EVIDENCE,
                             f"{TESTS}/refs", marker, entry], binds=binds, limits=reader_limits(memory_mb, timeout),
                            workdir=workdir, readonly_same_path=(Path(env_dir),) if env_dir else (),
                            env={"NUMBA_CACHE_DIR": "/tmp"})
    except SandboxSetupError as exc:
        raise EvaluatorFailed(f"the evaluator could not start: {exc}") from None
    text = done.stdout.decode("utf-8", "replace")
    result = next((json.loads(line[len(marker):]) for line in reversed(text.splitlines()) if line.startswith(marker)),
                  None)
    if result is None:
        if done.killed_by:
            raise EvaluationRejected(f"the evaluator was stopped by {done.killed_by} reading the submission's "
                                     "outputs")
        tail = done.stderr.strip().splitlines()[-3:]
        raise EvaluatorFailed(f"the evaluator failed (exit {done.result.exit_code}): {' | '.join(tail)}")
    if "__broken__" in result:
        b = result["__broken__"]
        raise EvaluatorFailed(f"the evaluator does not load: {b['type']}: {b['message']}")
    if "__raised__" in result:
        r = result["__raised__"]
        why = f"{r['type']}: {r['message']}"
        if name_is_code_fault(r["type"]):
            raise EvaluatorFailed(f"the evaluator's code failed: {why}")
        raise EvaluationRejected(f"the evaluator failed on the submission's outputs: {why}")
    return result


