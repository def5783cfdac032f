"""session/usage.json: a real session's file is a SessionUsage, and a malformed one is one line to the user
and a warning to the index, never a traceback."""

from __future__ import annotations

import json
import logging

import pytest

from tests.conftest import run_cli
from workbench.batch.matrix import AgentConfig
from workbench.paths import RunPaths
from workbench.session.ledger import SessionUsage, read_usage
from workbench.store import Store
from workbench.trial.pipeline import run_trial


@pytest.mark.slow
def test_a_sessions_usage_json_is_a_session_usage_and_a_malformed_one_is_one_line(mini_task, tmp_path, caplog):
    rec = run_trial(mini_task, AgentConfig(name="oracle", agent="oracle"), tmp_path / "run", engine="inline")
    tp = RunPaths(tmp_path / "run").trial(rec.id)
    usage = read_usage(tp)
    assert json.loads(tp.usage.read_text()) == usage.model_dump()  # every field the file holds is the model's
    assert usage.turns == 0 and usage.wall_sec >= 0 and usage.scoring_service is None  # the oracle calls no model

    good = tp.usage.read_text()
    tp.usage.write_text(json.dumps({**usage.model_dump(), "turns": "many"}))
    try:
        proc = run_cli("trajectory", str(tp.root))
        # the index keeps the trial, without its usage, and says why
        with caplog.at_level(logging.WARNING, logger="workbench.store"):
            assert Store.for_run(tmp_path / "run").rebuild(tmp_path / "run") == 1
    finally:
        tp.usage.write_text(good)  # the suite exports every trajectory it leaves behind
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("error:")] == [
        f"error: {tp.usage}: turns: Input should be a valid integer, unable to parse string as an integer"]
    assert f"{tp.usage}: turns" in caplog.text
    row = Store.for_run(tmp_path / "run").frame("trials").iloc[0]
    assert row["status"] == "complete" and row["turns"] is None


def test_usage_json_of_an_earlier_version_still_loads():
    old = {"turns": 3, "input_tokens": 10, "output_tokens": 2, "cost_usd": None, "wall_sec": 1.5}
    assert SessionUsage.model_validate(old).scoring_service is None
