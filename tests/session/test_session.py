"""Stage 1, the agent session: what it delivers and what it records in session/ (delivery.json, usage.json,
trajectory.jsonl, agent.log), on the small synthetic task."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, config
from tests.scoring.modes import write_sota_task
from workbench.agents import PublicTask
from workbench.io import digest_of, tree_hashes
from workbench.paths import TrialPaths
from workbench.session.ledger import Delivery
from workbench.session.run import budget_for, run_session, wants_scoring_service
from workbench.task import load_task


def test_oracle_delivers_the_solution(mini_task, tmp_path):
    d = run_session(mini_task, {"name": "oracle", "agent": "oracle"}, tmp_path / "t")
    assert d.status == "delivered" and d.agent_status == "completed"
    sub = tmp_path / "t/session/submission"
    assert (sub / "reproduce.sh").read_text() == (mini_task.root / "solution/reproduce.sh").read_text()
    lines = (tmp_path / "t/session/trajectory.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["role"] == "agent"
    assert json.loads((tmp_path / "t/session/usage.json").read_text())["wall_sec"] >= 0


def test_nop_delivers_the_starter_unchanged(mini_task, tmp_path):
    d = run_session(mini_task, {"name": "nop", "agent": "nop"}, tmp_path / "t")
    assert d.status == "starter_only" and d.submission_digest == d.starter_digest


def test_delivery_probe_says_absent_without_reproduce_sh(mini_task, tmp_path):
    (mini_task.root / "environment/starter_submission/reproduce.sh").unlink()
    assert run_session(mini_task, {"name": "nop", "agent": "nop"}, tmp_path / "t").status == "absent"


@pytest.mark.parametrize("agent", ["nop", "oracle"])
def test_a_session_records_delivery_usage_trajectory_and_log(mini_task, tmp_path, agent):
    d = run_session(mini_task, config(agent), tmp_path / "t")
    tp = TrialPaths(tmp_path / "t")
    assert Delivery.model_validate_json(tp.delivery.read_text()) == d  # the record on disk is what was returned
    assert (d.agent, d.agent_status, d.network) == (agent, "completed", "none")
    assert d.files == 1 and d.submission_digest == digest_of(tree_hashes(tp.submission))
    assert d.starter_digest == digest_of(tree_hashes(mini_task.paths.starter))
    assert json.loads(tp.usage.read_text())["wall_sec"] == d.wall_sec
    turns = [json.loads(line) for line in tp.trajectory.read_text().splitlines()]
    assert [t["turn"] for t in turns] == [1] and {"timestamp", "role", "message"} <= set(turns[0])
    assert tp.agent_log.read_text() == f"{agent}: completed: {d.message}\n"


def test_a_refusal_is_recorded_beside_what_was_left_in_the_submission(mini_task, tmp_path):
    d = run_session(mini_task, config("refuse", options={"message": "not my field"}), tmp_path / "t")
    assert (d.agent_status, d.message, d.status) == ("refused", "not my field", "starter_only")
    [turn] = [json.loads(line) for line in TrialPaths(tmp_path / "t").trajectory.read_text().splitlines()]
    assert turn["message"] == "not my field"


def test_a_second_session_starts_over(mini_task, tmp_path):
    run_session(mini_task, config("oracle"), tmp_path / "t")
    tp = TrialPaths(tmp_path / "t")
    (tp.session / "stale.txt").write_text("from the first session")
    d = run_session(mini_task, config("nop"), tmp_path / "t")
    assert d.status == "starter_only" and not (tp.session / "stale.txt").exists()
    assert len(tp.trajectory.read_text().splitlines()) == 1  # not appended to the first session's
    assert (tp.submission / "reproduce.sh").read_text() == "exit 1\n"  # the starter again, not the solution


def test_a_task_without_a_starter_gives_an_empty_submission(mini_task, tmp_path):
    (mini_task.paths.starter / "reproduce.sh").unlink()
    mini_task.paths.starter.rmdir()
    d = run_session(mini_task, config("nop"), tmp_path / "t")
    assert (d.status, d.files, d.starter_digest) == ("absent", 0, None)
    assert list(TrialPaths(tmp_path / "t").submission.iterdir()) == []


def test_the_budget_scales_the_tasks_time_and_carries_the_configured_limits(mini_task, tmp_path):
    cfg = config("nop", time_scale=0.5, max_turns=7, max_cost_usd=1.5,
                 prices={"input_per_mtok": 2.0, "output_per_mtok": 8.0})
    timeout = PublicTask.of(mini_task).timeout_sec
    b = budget_for(cfg, PublicTask.of(mini_task))
    assert (b.wall_sec, b.max_turns, b.max_cost_usd) == (timeout * 0.5, 7, 1.5)
    assert (b.input_per_mtok, b.output_per_mtok) == (2.0, 8.0)
    d = run_session(mini_task, cfg, tmp_path / "t")
    assert d.budget == {"wall_sec": timeout * 0.5, "max_turns": 7, "max_tokens": None, "max_cost_usd": 1.5}


def test_the_scoring_service_is_on_for_sota_and_discovery_tasks_unless_the_configuration_says_otherwise(
        mini_task, tmp_path):
    sota = load_task(write_sota_task(tmp_path / "sota"))
    assert wants_scoring_service(sota, config("nop"))
    discovery = load_task(REPO / "tasks" / "circle-packing-26")
    assert wants_scoring_service(discovery, config("nop"))
    assert not wants_scoring_service(discovery, config("nop", options={"scoring_service": False}))
    assert not wants_scoring_service(sota, config("nop", options={"scoring_service": False}))
    assert not wants_scoring_service(mini_task, config("nop"))  # a rubric task
    assert wants_scoring_service(mini_task, config("nop", options={"scoring_service": True}))
