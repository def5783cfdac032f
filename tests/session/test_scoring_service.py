"""The hidden scoring service: token, official score by clean replay, attempts the agent cannot write,
the paused session clock, and an agent that uses it without being able to read the evaluator."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from tests.fake_openai import ScriptedServer, reply
from tests.scoring.modes import SOLUTION, write_sota_task
from workbench.agents.base import Budget
from workbench.agents.scoring_client import submit
from workbench.batch.matrix import AgentConfig
from workbench.io import copy_tree
from workbench.paths import TrialPaths
from workbench.session.ledger import ScoringAttempt, ScoringResult, read_usage
from workbench.session.run import run_session
from workbench.session.scoring_service import ScoringService
from workbench.task import load_task


@pytest.mark.slow
def test_the_service_scores_the_candidate_and_keeps_the_best_attempt(tmp_path):
    task = load_task(write_sota_task(tmp_path / "task"))
    cand = tmp_path / "cand"
    copy_tree(task.paths.starter, cand)
    budget = Budget(wall_sec=600)
    tp = TrialPaths(tmp_path / "t")
    with ScoringService(task, lambda d: copy_tree(cand, d), tp, pause=budget.paused) as svc:
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(urllib.request.Request(f"{svc.url}/evaluate", data=b"{}",
                                                          headers={"Authorization": "Bearer guess"}))
        assert denied.value.code == 403
        assert submit(svc.url, "wrong")["error"].startswith("HTTP 403")
        first = submit(svc.url, svc.token, "the starter")
        (cand / "reproduce.sh").write_text(SOLUTION)
        before = budget.elapsed()
        second = submit(svc.url, svc.token, "the real thing")
        paused = budget.paused_sec
        (cand / "reproduce.sh").write_text("exit 1\n")
        third = submit(svc.url, svc.token, "a regression")
        best = json.loads(urllib.request.urlopen(urllib.request.Request(
            f"{svc.url}/best", headers={"Authorization": f"Bearer {svc.token}"})).read())
    assert first["sota"]["g"] == -1.0 and first["replay"] == "failed"
    assert second["sota"]["band"] == "surpass" and second["sota"]["instances"]["b"]["value"] == 1.5
    assert third["best"]["attempt"] == 2 and best["best"]["attempt"] == 2 and best["attempts"] == 3
    assert "leaves" not in json.dumps(second) and "rationale" not in json.dumps(second)
    # the clock stood still while the workbench replayed and evaluated
    assert paused >= second["evaluation_sec"] * 0.9 and budget.elapsed() - before < 0.5 + second["evaluation_sec"] * 0.2
    # the log, one ScoringAttempt per line, and best.json, the best ScoringResult
    log = [ScoringAttempt.model_validate_json(x) for x in tp.attempts.read_text().splitlines()]
    assert [a.description for a in log] == ["the starter", "the real thing", "a regression"]
    assert [a.best.attempt for a in log] == [1, 2, 2]
    assert log[1].answer() == second and ScoringResult.model_validate_json(tp.best.read_text()) == log[1].best
    # the package that earned the best attempt is kept, not the later regression
    assert (tp.best_submission / "reproduce.sh").read_text() == SOLUTION


@pytest.mark.slow
def test_an_agent_gets_its_score_from_the_service_and_cannot_read_the_evaluator(tmp_path):
    task = load_task(write_sota_task(tmp_path / "task"))
    evaluator = task.paths.evaluator
    probe = (f"cat {evaluator}; ls {evaluator.parent}; find / -name evaluator.py -o -name sota.json 2>/dev/null; "
             "echo url=${WORKBENCH_SCORING_URL:-none}")
    script = [reply("", [("bash", {"command": probe})]),
              reply("", [("write_file", {"path": "reproduce.sh", "content": SOLUTION})]),
              reply("", [("submit_for_score", {"description": "first try"})]),
              reply("", [("finish", {"summary": "done"})])]
    config = AgentConfig(name="scripted", agent="openai", model="m",
                         options={"base_url": ""})
    with ScriptedServer(script) as server:
        config.options["base_url"] = server.url
        started = time.monotonic()
        run_session(task, config, tmp_path / "t")
        wall = time.monotonic() - started
        tools = [t["function"]["name"] for t in server.requests[0]["tools"]]
    traj = [json.loads(x) for x in (tmp_path / "t/session/trajectory.jsonl").read_text().splitlines()]
    obs = [o["content"] for r in traj for o in r.get("observations", [])]
    assert "submit_for_score" in tools
    assert "run_evaluation" not in obs[0] and "No such file" in obs[0] and "sota.json" not in obs[0]
    scored = json.loads(obs[2])
    assert scored["sota"]["band"] == "surpass" and scored["attempt"] == 1
    tp = TrialPaths(tmp_path / "t")
    assert ScoringAttempt.model_validate_json(tp.attempts.read_text()).description == "first try"
    usage = read_usage(tp)  # usage.json is a SessionUsage, with the service's summary
    assert usage.scoring_service.attempts == 1 and usage.scoring_service.best.sota["g"] > 0.1
    assert usage.wall_sec < wall - 0.8 * usage.scoring_service.evaluation_sec  # paused clock
    # the attempt log lives with the trial, outside anything the sandbox mounts
    assert not (tmp_path / "t/session/submission/scoring").exists()


@pytest.mark.slow
def test_the_service_tells_only_what_the_tasks_mode_exposes(tmp_path):
    from tests.conftest import write_task

    # a hidden rubric: R, coverage and phase scores would let an agent hill-climb private leaves
    rubric_task = load_task(write_task(tmp_path / "rubric-task"))
    cand = tmp_path / "cand"
    copy_tree(rubric_task.paths.solution, cand)
    with ScoringService(rubric_task, lambda d: copy_tree(cand, d), TrialPaths(tmp_path / "t1")) as svc:
        answer = submit(svc.url, svc.token)
    assert answer["replay"] == "succeeded" and answer["failure_reasons"] == []
    assert not {"R", "coverage", "phases", "sota", "qa"} & set(answer) and "R" not in (answer["best"] or {})
    # a sota task: its metrics, g and band (NatureBench), still no R or phases
    sota_task = load_task(write_sota_task(tmp_path / "sota-task"))
    copy_tree(sota_task.paths.solution, cand, dirs_exist_ok=True)
    with ScoringService(sota_task, lambda d: copy_tree(cand, d), TrialPaths(tmp_path / "t2")) as svc:
        answer = submit(svc.url, svc.token)
    assert answer["sota"]["band"] == "surpass" and not {"R", "coverage", "phases"} & set(answer)
    # configurable per task
    toml = rubric_task.paths.task_toml
    toml.write_text(toml.read_text().replace("[metadata.replay]",
                                             "[verifier]\nfeedback = [\"replay\", \"R\"]\n\n[metadata.replay]"))
    with ScoringService(load_task(rubric_task.root), lambda d: copy_tree(cand, d), TrialPaths(tmp_path / "t3")) as svc:
        answer = submit(svc.url, svc.token)
    assert "R" in answer and "phases" not in answer


def test_an_evaluation_that_fails_is_logged_and_never_the_best(tmp_path):
    task = load_task(write_sota_task(tmp_path / "task"))

    def broken(dest):
        raise OSError("the snapshot could not be taken")

    tp = TrialPaths(tmp_path / "t")
    with ScoringService(task, broken, tp) as svc:
        answer = submit(svc.url, svc.token, "try")
    assert answer["error"] == "OSError: the snapshot could not be taken" and answer["best"] is None
    assert "replay" not in answer and "sota" not in answer  # nothing was evaluated, nothing is claimed
    logged = ScoringAttempt.model_validate_json(tp.attempts.read_text())
    assert logged.error == answer["error"] and logged.best is None and not tp.best.exists()
    assert svc.summary().attempts == 1 and svc.summary().best is None


def test_a_discovery_attempt_is_ranked_by_its_valid_metric_in_the_tasks_direction():
    """EurekAgent's ranked history: a valid construction beats any invalid one, then the better metric
    (smaller for a minimised bound), whatever the order the attempts came in."""
    from workbench.session.ledger import ScoringResult
    from workbench.session.scoring_service import _key

    def attempt(n, metric, valid=True):
        return ScoringResult(attempt=n, replay="succeeded", discovery={"metric": metric, "valid": valid})

    found = [attempt(1, 0.39), attempt(2, 0.385), attempt(3, None, valid=False), attempt(4, 0.41)]
    assert max(found, key=lambda r: _key(r, -1)).attempt == 2
    assert max(found, key=lambda r: _key(r, 1)).attempt == 4
    assert max([attempt(1, None, valid=False), attempt(2, 0.5)], key=lambda r: _key(r, -1)).attempt == 2
