"""Secret-input replays: a second clean replay with values the submission could not know.

The mini task's contract: ``inputs.json`` holds ``{"x": ...}``; ``results/value.json`` must hold x squared.
The public replay gets x = 3; the secret replay a 9-digit x drawn for it alone. A scorer recomputes both.
"""

from __future__ import annotations

import json
import random

import pytest

from tests.conftest import write_task
from workbench.errors import WorkbenchError
from workbench.replay.trial import replay_trial
from workbench.scoring import score_trial
from workbench.task import load_task
from workbench.task.secret_inputs import draw_inputs

RECOMPUTE = '''
import json, random
def square(evidence, replay="public", seed=None):
    root = evidence / ("secret/" if replay == "secret" else "")
    x = json.loads((root / "replay/input/inputs.json").read_text())["x"]
    got = json.loads((root / "submission/results/value.json").read_text())["value"]
    return {"score": float(got == x * x), "rationale": f"x={x}: {got} vs {x * x}; seed {type(seed).__name__}"}
'''
RUBRIC = {"id": "sq", "title": "square", "requirements": "x squared", "sub_tasks": [
    {"id": "public", "weight": 1, "task_category": "Validation", "requirements": "published x",
     "check": {"kind": "recompute", "function": "square", "timeout_sec": 60}},
    {"id": "secret-ran", "weight": 1, "task_category": "Execution", "requirements": "secret replay ran",
     "check": {"kind": "replay_succeeded", "replay": "secret"}},
    {"id": "secret", "weight": 2, "task_category": "Validation", "requirements": "secret x",
     "check": {"kind": "recompute", "function": "square", "params": {"replay": "secret"}, "timeout_sec": 60}},
    {"id": "code", "weight": 1, "task_category": "Execution", "requirements": "no data in code",
     "check": {"kind": "data_in_code", "max_bytes": 1024}},
]}
HONEST = ("mkdir -p results\npython3 -c 'import json; x = json.load(open(\"inputs.json\"))[\"x\"]; "
          "json.dump({\"value\": x * x}, open(\"results/value.json\", \"w\"))'\n")
TYPED = 'mkdir -p results\necho \'{"value": 9}\' > results/value.json\n'


@pytest.fixture
def square_task(tmp_path):
    root = write_task(tmp_path / "square", rubric=RUBRIC)
    with open(root / "task.toml", "a") as f:
        f.write('\n[metadata.replay.secret_inputs]\npath = "inputs.json"\n'
                'published = "environment/starter_submission/inputs.json"\n')
    (root / "environment/starter_submission/inputs.json").write_text('{"x": 3}\n')
    (root / "tests/secret_inputs.py").write_text(
        "def draw(rng):\n    return {'x': rng.randint(10**8, 10**9)}\n")
    (root / "tests/recompute.py").write_text(RECOMPUTE)
    return load_task(root)


def _leaves(scores):
    return {lf.id: lf for lf in scores.leaves}


@pytest.mark.slow
def test_an_honest_package_follows_the_secret_inputs(square_task, submission, tmp_path):
    prov = replay_trial(square_task, submission({"reproduce.sh": HONEST}), tmp_path / "t")
    assert prov.status == "succeeded" and prov.secret_replay["status"] == "succeeded"
    ev = tmp_path / "t/evidence"
    assert json.loads((ev / "replay/input/inputs.json").read_text()) == {"x": 3}
    x = json.loads((ev / "secret/replay/input/inputs.json").read_text())["x"]
    assert x >= 10**8
    assert json.loads((ev / "secret/submission/results/value.json").read_text())["value"] == x * x
    scores = score_trial(square_task, tmp_path / "t")
    assert scores.R == 1.0
    # the recomputation got a seed it did not choose, and the rationale says which
    secret = _leaves(scores)["secret"].rationale
    assert "seed int" in secret and "[spot-check seed " in secret


@pytest.mark.slow
def test_typed_in_results_pass_the_public_values_and_fail_the_secret_ones(square_task, submission, tmp_path):
    """The attack: results computed outside the replay for the published inputs (here typed in)."""
    replay_trial(square_task, submission({"reproduce.sh": TYPED}), tmp_path / "t")
    leaves = _leaves(score_trial(square_task, tmp_path / "t"))
    assert leaves["public"].score == 1.0  # the cache is right where the answer was known
    assert leaves["secret-ran"].score == 1.0 and leaves["secret"].score == 0.0


@pytest.mark.slow
def test_a_delivered_inputs_file_is_replaced_and_editing_it_fails_the_replay(square_task, submission, tmp_path):
    sub = submission({"reproduce.sh": HONEST, "inputs.json": '{"x": 5}'})
    replay_trial(square_task, sub, tmp_path / "a")
    assert json.loads((tmp_path / "a/evidence/submission/results/value.json").read_text())["value"] == 9
    edit = submission({"reproduce.sh": "echo '{\"x\": 4}' > inputs.json\n" + HONEST})
    prov = replay_trial(square_task, edit, tmp_path / "b")
    assert prov.status == "failed" and "inputs.json" in prov.failure_reasons[0]
    assert prov.secret_replay is None  # the first replay failed: no second one is spent on it
    assert not (tmp_path / "b/evidence/secret").exists()


@pytest.mark.slow
def test_each_replay_draws_its_own_values(square_task, submission, tmp_path):
    sub = submission({"reproduce.sh": HONEST})
    seen = set()
    for name in ("a", "b"):
        replay_trial(square_task, sub, tmp_path / name)
        seen.add((tmp_path / name / "evidence/secret/replay/input/inputs.json").read_text())
    assert len(seen) == 2


def test_draw_is_the_tasks_own_function_and_its_failure_is_the_tasks(square_task):
    assert json.loads(draw_inputs(square_task, random.Random(1))) == json.loads(
        draw_inputs(square_task, random.Random(1)))
    square_task.paths.secret_inputs_py.write_text("def draw(rng):\n    return 1 / 0\n")
    with pytest.raises(WorkbenchError, match="draw\\(\\) failed: ZeroDivisionError"):
        draw_inputs(square_task)


@pytest.mark.slow
def test_results_shipped_base64_in_code_are_reported_and_gated(square_task, submission, tmp_path):
    import base64
    import os
    import zlib

    blob = base64.b64encode(zlib.compress(os.urandom(3000))).decode()
    sub = submission({"reproduce.sh": HONEST, "src/cache.py": f"DATA = '{blob}'\n"})
    prov = replay_trial(square_task, sub, tmp_path / "t")
    assert prov.data_in_code["findings"][0]["path"] == "src/cache.py"
    assert prov.data_in_code["findings"][0]["kind"] == "base64"
    leaf = _leaves(score_trial(square_task, tmp_path / "t"))["code"]
    assert leaf.score == 0.0 and "src/cache.py" in leaf.rationale


def test_task_check_refuses_inputs_that_are_not_secret(square_task):
    from workbench.authoring.check import check_task

    report = check_task(square_task.root)
    assert report.errors == [] and any("does not mention inputs.json" in w for w in report.warnings)
    square_task.paths.secret_inputs_py.write_text("def draw(rng):\n    return {'x': 7}\n")
    assert any("same file twice" in e for e in check_task(square_task.root).errors)
    (square_task.root / "environment/starter_submission/inputs.json").unlink()
    assert any("not a file of the task" in e for e in check_task(square_task.root).errors)
