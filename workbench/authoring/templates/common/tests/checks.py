"""The task's own checks (PRIVATE): `@task_check` functions a rubric leaf names (`{"kind": "task", "name":
...}`). Each gets the evidence (read-only; `ev.read_json("submission/results/...")`) and the leaf's params,
and returns a CheckOutcome, a bool, a score in [0, 1] or (score, rationale). A missing or unreadable file
raises MissingEvidence, which scores the leaf 0 with the reason."""

from workbench.scoring import CheckOutcome, task_check


@task_check
def declared_method(ev, replay: str = "public"):
    """The estimate says how it was made, with the contract's sample count (the inputs of that replay)."""
    pre = "secret/" if replay == "secret" else ""
    claimed = ev.read_json(f"{pre}submission/results/estimate.json")
    inputs = ev.read_json(f"{pre}replay/input/inputs.json")
    ok = claimed.get("method") == "monte-carlo" and claimed.get("n") == inputs.get("n")
    return CheckOutcome(float(ok), f"method {claimed.get('method')!r}, n = {claimed.get('n')} "
                                   f"(inputs.json: n = {inputs.get('n')})",
                        [f"{pre}submission/results/estimate.json"])
