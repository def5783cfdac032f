import json

import pytest

from tests.conftest import config, write_task
from workbench.trajectory.activities import allocate, code_call


@pytest.mark.parametrize("call, activity", [
    ({"name": "read_file", "arguments": {"path": "/home/task/paper/paper.md"}}, "paper_reconstruction"),
    ({"name": "bash", "arguments": {"command": "grep -n energy /home/task/instruction.md"}}, "paper_reconstruction"),
    ({"name": "write_file", "arguments": {"path": "src/model.py", "content": "x = 1"}}, "implementation"),
    ({"name": "bash", "arguments": {"command": "sed -i 's/0.1/0.05/' src/run.py"}}, "implementation"),
    ({"name": "bash", "arguments": '{"command": "python3 src/run.py --basis cc-pvdz"}'}, "native_execution"),
    ({"name": "bash", "arguments": {"command": "mpirun -np 2 pw.x -in si.in"}}, "native_execution"),
    ({"name": "bash", "arguments": {"command": "tail -n 50 results/run.log"}}, "diagnosis_and_tuning"),
    ({"name": "bash", "arguments": {"command": "python -c 'import json; print(json.load(open(\"r.json\")))'"}},
     "diagnosis_and_tuning"),
    ({"name": "bash", "arguments": {"command": "bash reproduce.sh"}}, "evidence_and_replay"),
    ({"name": "write_file", "arguments": {"path": "reproduce.sh", "content": "python run.py"}}, "evidence_and_replay"),
    ({"name": "finish", "arguments": {}}, "evidence_and_replay"),
    ({"name": "bash", "arguments": {"command": "echo hello"}}, "uncoded"),
])
def test_fixed_rules_code_tool_calls(call, activity):
    assert code_call(call) == activity


def test_turn_time_is_split_over_its_calls_and_untimed_turns_are_skipped():
    records = [
        {"role": "system", "message": "task"},  # no elapsed: not tool-mediated
        {"role": "assistant", "elapsed_sec": 10.0, "tool_calls": [
            {"name": "read_file", "arguments": {"path": "paper/paper.md"}},
            {"name": "write_file", "arguments": {"path": "src/a.py"}}]},
        {"role": "assistant", "elapsed_sec": 40.0,
         "tool_calls": [{"name": "bash", "arguments": {"command": "python a.py"}}]},
        {"role": "assistant", "elapsed_sec": 45.0, "message": "thinking, no tools"},
    ]
    assert allocate(records) == {"paper_reconstruction": 5.0, "implementation": 5.0, "native_execution": 30.0}


@pytest.mark.slow
def test_the_index_holds_activity_time_and_task_fields(tmp_path):
    from workbench.store import Store
    from workbench.task import load_task
    from workbench.trial.pipeline import run_trial

    task = load_task(write_task(tmp_path / "mini"))
    run = tmp_path / "run"
    run_trial(task, config("oracle"), run, engine="inline")
    traj = run / "trials/mini__oracle__1/session/trajectory.jsonl"
    with traj.open("a") as fh:
        fh.write(json.dumps({"role": "assistant", "elapsed_sec": 12.0, "tool_calls": [
            {"name": "bash", "arguments": {"command": "python3 solve.py"}}]}) + "\n")
    store = Store.for_run(run)
    store.rebuild(run)
    row = store.frame().iloc[0]
    assert (row.field, row.domain, row.scoring) == ("sandboxing", "testing", "rubric")
    usage = json.loads((run / "trials/mini__oracle__1/session/usage.json").read_text())
    assert row.turns == usage["turns"] and row.modeling_share == 1.0 and row.validation_share == pytest.approx(0.5)
    assert row.uncounted_weight == pytest.approx(0.25)  # the expert leaf awaiting review
    wf = store.frame("activity_time")
    spent = dict(zip(wf.activity, wf.seconds, strict=True))
    assert spent["native_execution"] == pytest.approx(12.0, abs=0.5)  # the oracle's own copy step is uncoded
    assert set(spent) <= {"native_execution", "uncoded"}
    assert row.activity_seconds == pytest.approx(sum(spent.values()))  # the trial's row says it has a trajectory
