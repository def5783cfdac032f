"""`workbench discover` on circle packing, driven by real programs run as CLI agents in the session sandbox:
a scripted hill-climber (tests/fixtures/discovery/bin/hillclimb) for a whole run, a killed run resumed, and
an attacker (bin/attacker) that looks for what a session must not reach."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from workbench.batch.matrix import AgentConfig
from workbench.discovery import discover
from workbench.discovery.records import DiscoveryState, Limits, RankedHistory
from workbench.errors import WorkbenchError
from workbench.sandbox.environments import envs_root
from workbench.task import load_task

pytestmark = pytest.mark.slow

TASK = REPO / "tasks" / "circle-packing-26"


def _reachable(fixture: Path) -> Path:
    """The fixture's programs where the sandbox's unprivileged user can reach them (beside the task
    environments): a clone may sit in a 0700 directory (``mktemp -d``), and a mount's source must not."""
    dest = envs_root() / "test-fixtures" / fixture.name
    shutil.copytree(fixture, dest, dirs_exist_ok=True)
    return dest


BIN = _reachable(REPO / "tests" / "fixtures" / "discovery")
HILLCLIMB = AgentConfig(name="hillclimb", agent="cli", options={"command": "hillclimb", "prefix": str(BIN)})
LIMITS = Limits(prepare_sec=120, propose_sec=120, implement_sec=120)


@pytest.fixture(scope="module", autouse=True)
def environment():
    from workbench.sandbox.environments import install_env

    install_env(load_task(TASK))  # numpy and scipy, which the hill-climber uses in the sandbox


def git_log(repo) -> list[str]:
    return subprocess.run(["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True,
                          check=True).stdout.splitlines()


@pytest.fixture(scope="module")
def three_rounds(tmp_path_factory):
    """One run of 3 rounds x 2 implement sessions of the hill-climber: (run directory, state, progress lines)."""
    out, said = tmp_path_factory.mktemp("discovery") / "run", []
    state = discover(TASK, HILLCLIMB, out, rounds=3, parallel=2, limits=LIMITS, say=said.append)
    return out, state, said


def test_three_rounds_of_two_sessions_find_rank_and_replay_a_packing_above_2_6(three_rounds):
    out, state, said = three_rounds
    assert [s.status for s in state.sessions] == ["done"] * 10 and state.stopped is None  # 1 + 3 x (1 + 2)
    history = RankedHistory.model_validate_json((out / "history.json").read_text())
    metrics = [e.metric for e in history.entries]
    assert metrics == sorted(metrics, reverse=True) and metrics[0] >= 2.6 and history.submitted >= len(metrics)
    assert "| 1 | " in (out / "history.md").read_text()
    # the best, replayed cleanly from the package that earned it, scores what the session was told
    final = state.final
    assert final["replay"] == "succeeded" and final["valid"] and final["metric"] == pytest.approx(metrics[0])
    assert final["R"] == 1.0 and final["session"] == history.entries[0].session
    scores = json.loads((out / "final" / "scores.json").read_text())
    assert scores["discovery"]["metric"] == final["metric"] and scores["scoring"] == "discovery"
    # each implement session's workspace is a git history: the controller's start, then the agent's versions
    for s in (s for s in state.sessions if s.phase == "implement"):
        log = git_log(out / "sessions" / s.id / "session" / "submission")
        assert log[-1].startswith("start: perturb and polish"), log
        assert len(log) >= 2 or s.best_metric is None or s.round > 1, (s.id, log)
    # same-round isolation: a round's context holds earlier rounds' workspaces only
    for r in (1, 2, 3):
        shown = {p.name for p in (out / "context" / f"r{r}" / "workspaces").glob("*")}
        assert all(int(name[1:].split("-")[0]) < r for name in shown), (r, shown)
        assert (r == 1) == (not shown)
    assert any(line.startswith("final: ") for line in said)


def test_a_killed_run_resumes_without_rerunning_a_finished_session(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "workbench", "discover", str(TASK), "--agent", "cli", "-o", "command=hillclimb",
           "-o", f"prefix={BIN}", "--rounds", "1", "--parallel", "2", "--prepare-min", "2", "--propose-min", "2",
           "--implement-min", "2", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # mid-round: an implement session running, none finished
        state = out / "discovery.json"
        implement = [s["status"] for s in json.loads(state.read_text())["sessions"]
                     if s["phase"] == "implement"] if state.is_file() else []
        if "running" in implement and "done" not in implement:
            break
        time.sleep(0.2)
    time.sleep(3)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = DiscoveryState.model_validate_json((out / "discovery.json").read_text())
    assert [s.status for s in before.sessions][:2] == ["done", "done"]
    assert {s.status for s in before.sessions[2:]} <= {"running", "pending"} and "running" in {
        s.status for s in before.sessions[2:]}
    kept = {s: (out / "sessions" / s / "session" / "delivery.json").stat().st_mtime_ns
            for s in ("prepare", "r1-propose")}
    said = []
    state = discover(TASK, HILLCLIMB, out, rounds=1, parallel=2, say=said.append)
    assert said[0] == f"resuming {out}: 2 of 4 sessions done"
    assert not any(line.startswith(("prepare:", "r1-propose:")) for line in said)  # not run again
    assert {s: (out / "sessions" / s / "session" / "delivery.json").stat().st_mtime_ns for s in kept} == kept
    assert [s.status for s in state.sessions] == ["done"] * 4 and state.final["valid"]
    assert state.limits.implement_sec == 120  # the budget the run was started with


def test_a_session_cannot_reach_a_sibling_the_evaluator_or_the_controllers_records(tmp_path):
    out = tmp_path / "run"
    attacker = AgentConfig(name="attacker", agent="cli", options={"command": "attacker", "prefix": str(BIN)})
    state = discover(TASK, attacker, out, rounds=1, parallel=2, limits=LIMITS, say=lambda _: None)
    for sid in ("r1-i1", "r1-i2"):
        findings = (out / "sessions" / sid / "session" / "submission" / "findings.txt").read_text()
        assert "siblings: \n" in findings and "evaluators: \n" in findings, findings
        assert "context: read-only" in findings
    history = RankedHistory.model_validate_json((out / "history.json").read_text())
    assert history.entries == [] and history.submitted == 2  # two NaN submissions, both invalid
    attempts = [json.loads(x) for x in (out / "sessions" / "r1-i1" / "session" / "scoring" / "attempts.jsonl")
                .read_text().splitlines()]
    assert attempts[0]["discovery"]["valid"] is False and "finite" in attempts[0]["discovery"]["message"]
    assert state.final == {"status": "no valid submission"}


def test_the_cost_limit_stops_a_run_in_one_line_with_every_workspace_kept(three_rounds, tmp_path):
    from workbench.io import copy_tree

    out = tmp_path / "run"
    copy_tree(three_rounds[0], out)  # the finished run, given a fourth round under a cost limit it has spent
    state = DiscoveryState.model_validate_json((out / "discovery.json").read_text())
    state.sessions[0].cost_usd = 0.5  # as a priced agent would have reported it
    (out / "discovery.json").write_text(state.model_dump_json())
    again = run_cli("discover", str(TASK), "--agent", "cli", "-o", "command=hillclimb", "-o", f"prefix={BIN}",
                    "--rounds", "4", "--cost-limit", "0.5", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert "stopped: the cost limit was reached: $0.5000 of $0.5000 across sessions; every workspace is kept" \
        in again.stdout
    after = DiscoveryState.model_validate_json((out / "discovery.json").read_text())
    assert [s.status for s in after.sessions[-3:]] == ["pending"] * 3  # round 4 never started
    assert all((out / "sessions" / s.id / "session" / "submission").is_dir() for s in after.sessions[:-3])
    assert after.final["valid"]  # the best so far is still replayed


def test_a_workspace_is_seeded_from_the_best_package_without_any_repository_a_session_made(tmp_path):
    """git reads commands from a repository's own configuration (core.fsmonitor, hooks): the controller runs
    git only on a repository it made, so every .git of the best package, at any depth, is left behind."""
    from workbench.discovery.loop import Controller, _plan
    from workbench.discovery.records import SessionRecord

    task = load_task(TASK)
    state = DiscoveryState(task=str(TASK), agent=HILLCLIMB, propose_agent=HILLCLIMB, rounds=1, parallel=1,
                           sessions=_plan(1, 1))
    ctl = Controller(task, state, tmp_path / "run", lambda _: None)
    rec = state.session("r1-i1")
    tp = ctl.trial(rec)
    pwned = tmp_path / "pwned"
    for repo in (tp.best_submission / ".git", tp.best_submission / "src" / ".git"):
        (repo / "hooks").mkdir(parents=True)
        (repo / "config").write_text(f"[core]\n\tfsmonitor = touch {pwned}\n\thooksPath = hooks\n")
        (repo / "hooks" / "pre-commit").write_text(f"#!/bin/sh\ntouch {pwned}\n")
        (repo / "hooks" / "pre-commit").chmod(0o755)
    (tp.best_submission / "reproduce.sh").write_text("echo best\n")
    tp.attempts.write_text('{"attempt": 1, "at": "", "discovery": {"metric": 2.5, "valid": true}, '
                           '"best": {"attempt": 1}}\n')
    start = ctl.workspace(SessionRecord(id="r2-i1", phase="implement", round=2, index=1),
                          {"title": "t", "description": "d"})
    assert (start / "reproduce.sh").read_text() == "echo best\n" and not pwned.exists()
    assert not (start / "src" / ".git").exists() and git_log(start) == ["start: t"]


@pytest.mark.model
def test_a_run_with_the_real_local_model_ends_within_its_budgets(tmp_path, model_server):
    """Gemma 3 270M (a base model) as every session's agent: whatever it says, every session ends within its
    turns and time, nothing crashes, and the run still ends with its history and a final verdict."""
    from tests.model_server import MODEL_NAME

    gemma = AgentConfig(name="gemma", agent="openai", model=MODEL_NAME, max_turns=3,
                        options={"base_url": model_server, "max_attempts": 2,
                                 "request": {"max_tokens": 96, "temperature": 0}})
    import threading

    from workbench.discovery import send_message

    said, out, result = [], tmp_path / "run", {}
    run = threading.Thread(target=lambda: result.update(state=discover(TASK, gemma, out, rounds=1, parallel=1,
                                                                       limits=LIMITS, say=said.append)))
    run.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out / "sessions" / "prepare" / "session" / "trajectory.jsonl").is_file():
        time.sleep(0.05)  # the prepare session is running: a person writes to it
    send_message(out, "prepare", "Start from a hexagonal arrangement.")
    run.join()
    state = result["state"]
    steps = [json.loads(x) for x in (out / "sessions" / "prepare" / "session" / "trajectory.jsonl").read_text()
             .splitlines()]
    assert any(r.get("kind") == "human_message" and "hexagonal" in r["message"] for r in steps)
    with pytest.raises(WorkbenchError, match="session prepare is done, not running"):
        send_message(out, "prepare", "too late")
    for s in state.sessions:  # ended: by the agent, or by an endpoint fault recorded as the session's failure
        assert s.status in ("done", "failed"), s
        if s.status == "failed":
            assert s.error.startswith("ModelEndpointError: model endpoint"), s
            continue
        usage = json.loads((out / "sessions" / s.id / "session" / "usage.json").read_text())
        assert s.agent_status in ("completed", "budget_exhausted", "timeout", "refused", "agent_error"), s
        assert usage["turns"] <= 3 and s.wall_sec <= LIMITS.for_phase(s.phase) + 5
    assert sum(s.status == "done" for s in state.sessions) >= 2  # the prepare and propose prompts fit
    assert (out / "history.json").is_file() and state.final is not None
    assert any(line.startswith(("final: ", "round 1: ")) for line in said)


def test_a_message_goes_only_to_a_running_session_of_an_agent_that_reads_messages(tmp_path):
    from workbench.discovery import send_message
    from workbench.discovery.loop import _plan

    out = tmp_path / "run"
    out.mkdir()
    state = DiscoveryState(task=str(TASK), agent=HILLCLIMB, propose_agent=HILLCLIMB, rounds=1, parallel=1,
                           sessions=_plan(1, 1))
    state.sessions[1].status = "running"
    (out / "discovery.json").write_text(state.model_dump_json())
    with pytest.raises(WorkbenchError, match="no session 'r9-i1'; there is: prepare, r1-propose, r1-i1"):
        send_message(out, "r9-i1", "hello")
    with pytest.raises(WorkbenchError, match="session prepare is pending, not running"):
        send_message(out, "prepare", "hello")
    with pytest.raises(WorkbenchError, match="runs the cli agent, which reads no messages"):
        send_message(out, "r1-propose", "hello")
    proc = run_cli("discover-message", str(tmp_path / "none"), "prepare", "hello")
    assert proc.returncode != 0 and proc.stderr.strip().endswith("no discovery run here (no discovery.json)")


@pytest.mark.browser
def test_the_run_page_shows_the_sessions_and_the_score_over_time(three_rounds, browser):
    from tests.conftest import ARTIFACTS
    from workbench.view.server import ViewServer

    out, state, _ = three_rounds
    server = ViewServer(out.parent, poll_seconds=1)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 1200, "height": 1000})
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto(server.url)
        page.locator("section.discovery-runs a", has_text="run").click()
        page.wait_for_selector("svg.chart polyline")
        assert page.locator("tr.session").count() == 10
        latest = page.locator("tr.session[data-session='r1-i1'] td.latest summary")
        assert latest.inner_text().startswith("turn ")  # each session's latest output, one click away
        best = state.final["metric"]
        assert f"{best:.10g}" in page.locator("svg.chart").inner_html()  # the global best, in its tooltip
        assert page.locator("svg.chart circle[r='7']").count() >= 1  # a round's best
        assert "Final: " in page.locator("p.final").inner_text() and "valid True" in page.inner_text("p.final")
        page.screenshot(path=str(ARTIFACTS / "view_discovery.png"), full_page=True)
        assert requested and all(u.startswith(server.base) for u in requested), requested  # offline
    finally:
        server.stop()


def test_a_paused_run_lets_the_running_session_finish_and_starts_no_other_until_the_pause_ends(tmp_path,
                                                                                              monkeypatch):
    """The controller's side of a pause (sessions here are a stand-in that returns at once: the real ones are
    the other tests'): the session running when a person pauses ends, the next waits for --off."""
    import threading

    import workbench.session.run
    from workbench.discovery import set_paused
    from workbench.session.ledger import Delivery

    started, release = [], threading.Event()

    def session(task, config, trial_dir, sandbox="bwrap", *, view=None, start=None):
        started.append(trial_dir.name)
        (trial_dir / "session" / "submission").mkdir(parents=True)
        if trial_dir.name == "prepare":
            release.wait(30)
        return Delivery(status="delivered", agent="stand-in", agent_status="completed", network="none", files=0,
                        submission_digest="", starter_digest=None, wall_sec=0.0)

    monkeypatch.setattr(workbench.session.run, "run_session", session)
    out, said = tmp_path / "run", []
    run = threading.Thread(target=discover, args=(TASK, HILLCLIMB, out),
                           kwargs={"rounds": 1, "parallel": 1, "say": said.append})
    run.start()
    while started != ["prepare"]:
        time.sleep(0.05)
    proc = run_cli("discover-pause", str(out))
    assert proc.returncode == 0 and proc.stdout.startswith("paused: "), proc.stderr
    release.set()
    time.sleep(2.5)
    assert started == ["prepare"] and any(line.startswith("paused: ") for line in said)
    assert set_paused(out, False) is True
    run.join(30)
    assert started == ["prepare", "r1-propose", "r1-i1"] and "resumed" in said


def _stand_in(behaviour):
    """A stand-in for run_session: ``behaviour(trial_dir, view, start)`` writes the session's working copy and
    returns its agent status (the real sessions are the other tests')."""
    from workbench.session.ledger import Delivery

    def session(task, config, trial_dir, sandbox="bwrap", *, view=None, start=None):
        sub = trial_dir / "session" / "submission"
        sub.mkdir(parents=True)
        status = behaviour(trial_dir, view, start)
        return Delivery(status="delivered", agent="stand-in", agent_status=status, network="none", files=0,
                        submission_digest="", starter_digest=None, wall_sec=0.0)

    return session


def test_extend_continues_a_session_that_ran_out_before_its_deliverable_and_a_killed_continuation_resumes(
        tmp_path, monkeypatch):
    import workbench.session.run

    calls = []

    def behaviour(trial_dir, view, start):
        calls.append((trial_dir.name, view.timeout_sec, start, view.instruction.split("\n")[2]))
        sub = trial_dir / "session" / "submission"
        if trial_dir.name == "prepare" and len(calls) == 1:
            (sub / "notes.txt").write_text("half-way")
            return "timeout"  # ran out, no PREPARATION.md
        if trial_dir.name == "prepare" and len(calls) == 2:
            raise KeyboardInterrupt  # the controller is killed during the continuation
        if trial_dir.name == "prepare":
            assert (start / "notes.txt").read_text() == "half-way"  # from where it stopped
            (sub / "PREPARATION.md").write_text("prepared")
        return "completed"

    monkeypatch.setattr(workbench.session.run, "run_session", _stand_in(behaviour))
    out, said = tmp_path / "run", []
    limits = Limits(prepare_sec=120, propose_sec=120, implement_sec=120, extend_sec=300)
    with pytest.raises(KeyboardInterrupt):
        discover(TASK, HILLCLIMB, out, rounds=1, parallel=1, limits=limits, say=said.append)
    assert calls[0][1] == 120 and calls[1][1] == 300 and calls[1][3].startswith("CONTINUED:")
    assert any("ran out of time before its deliverable; continued for 300 s" in line for line in said)
    state = discover(TASK, HILLCLIMB, out, say=said.append)  # resumed: the continuation again, not the first part
    assert [c[0] for c in calls] == ["prepare", "prepare", "prepare", "r1-propose", "r1-i1"]
    assert calls[2][1] == 300 and calls[2][2] == out / "sessions" / "prepare.part1" / "session" / "submission"
    prep = state.session("prepare")
    assert prep.status == "done" and prep.extended_sec == 300 and prep.agent_status == "completed"
    assert (out / "context" / "r1" / "PREPARATION.md").read_text() == "prepared"
    # a session that delivered, or ran out with extend off, is not continued
    assert state.session("r1-propose").extended_sec == 0


def test_the_preparation_asks_a_person_and_the_run_waits_for_the_answer(tmp_path, monkeypatch):
    started = []
    out, run, said = _waiting_on_a_question(tmp_path, monkeypatch, "Is touching the wall allowed?", started)
    time.sleep(1.5)
    assert started == ["prepare"], said  # the run waits: no proposal before the answer
    assert "Is touching the wall allowed?" in said[-1] and "discover-message" in said[-1]
    proc = run_cli("discover-message", str(out), "prepare", "Yes: a circle may touch the square's side.")
    assert proc.returncode == 0, proc.stderr
    run.join(30)
    assert started == ["prepare", "r1-propose", "r1-i1"]
    answers = (out / "context" / "r1" / "ANSWERS.md").read_text()
    assert "Is touching the wall allowed?" in answers and "a circle may touch the square's side" in answers
    state = DiscoveryState.model_validate_json((out / "discovery.json").read_text())
    assert state.answer.startswith("Yes: a circle") and state.question == "Is touching the wall allowed?"
    assert any(line.startswith("answered: the run goes on") for line in said)


def _waiting_on_a_question(tmp_path, monkeypatch, question: str = "May circles touch?",
                           started: list[str] | None = None):
    """A run (stand-in sessions) whose preparation asked ``question``: (run directory, its thread, what it
    said); ``started`` collects the sessions started."""
    import threading

    import workbench.session.run

    def behaviour(trial_dir, view, start):
        if started is not None:
            started.append(trial_dir.name)
        if trial_dir.name == "prepare":
            (trial_dir / "session" / "submission" / "QUESTIONS.md").write_text(question + "\n")
        return "completed"

    monkeypatch.setattr(workbench.session.run, "run_session", _stand_in(behaviour))
    out, said = tmp_path / "run", []
    run = threading.Thread(target=discover, args=(TASK, HILLCLIMB, out),
                           kwargs={"rounds": 1, "parallel": 1, "say": said.append})
    run.start()
    deadline = time.monotonic() + 30
    while not any(line.startswith("prepare asks a person") for line in said) and time.monotonic() < deadline:
        time.sleep(0.05)
    return out, run, said


@pytest.mark.browser
def test_a_person_answers_the_preparation_from_the_run_page(tmp_path, monkeypatch, browser):
    from tests.conftest import ARTIFACTS
    from workbench.view.server import ViewServer

    out, run, said = _waiting_on_a_question(tmp_path, monkeypatch)
    server = ViewServer(out.parent, poll_seconds=1)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(server.url)
        page.locator("section.discovery-runs a", has_text="run").click()
        assert "May circles touch?" in page.inner_text(".question")
        form = page.locator("form.message")
        assert form.locator("input[name=session]").input_value() == "prepare"
        form.locator("textarea").fill("They may touch but not overlap.")
        page.screenshot(path=str(ARTIFACTS / "view_discovery_message.png"), full_page=True)
        form.locator("button").click()
        page.locator(".message-status", has_text="sent").wait_for()
        assert page.inner_text(".message-status") == "answer sent to prepare"
        run.join(30)
        assert (out / "context" / "r1" / "ANSWERS.md").read_text().count("They may touch but not overlap.") == 1
        # a message to a session that is not running says why, in the page
        form.locator("input[name=session]").fill("r1-i1")
        form.locator("textarea").fill("hello")
        form.locator("button").click()
        page.locator(".message-status", has_text="is done, not running").wait_for()
    finally:
        server.stop()


@pytest.mark.attack
def test_only_the_holder_of_the_views_token_can_message_a_session(tmp_path, monkeypatch):
    """The view's one write: without the token, from another origin or as a cross-site form (not JSON), a
    message reaches no session and answers no question."""
    import http.client

    from workbench.view.server import ViewServer

    out, run, _ = _waiting_on_a_question(tmp_path, monkeypatch)
    server = ViewServer(out.parent)
    server.start()

    def post(body: bytes, ctype="application/json", token=server.token, origin=None):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        headers = {"Host": f"127.0.0.1:{server.port}", "Content-Type": ctype}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if origin:
            headers["Origin"] = origin
        conn.request("POST", "/discovery/run/message", body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.read().decode()

    try:
        msg = json.dumps({"session": "prepare", "text": "forged answer"}).encode()
        assert post(msg, token=None)[0] == 403
        assert post(msg, token="wrong")[0] == 403
        assert post(msg, origin="http://evil.example")[0] == 403
        assert post(b"session=prepare&text=forged", ctype="application/x-www-form-urlencoded")[0] == 415
        assert post(b"x" * 20000)[0] == 413
        assert not (out / "answer.txt").exists()
        status, body = post(json.dumps({"session": "nobody", "text": "hi"}).encode())
        assert status == 400 and "no session 'nobody'" in body
        assert post(json.dumps({"session": "prepare", "text": "the real answer"}).encode())[0] == 200
        run.join(30)
        assert DiscoveryState.model_validate_json((out / "discovery.json").read_text()).answer == "the real answer"
    finally:
        server.stop()


def test_the_report_of_discovery_runs_compares_the_best_so_far_with_the_published_record(three_rounds, tmp_path):
    """`workbench report` on a directory of discovery runs: the section's table (final best against the
    published value, valid rate, improvements) from the executed notebook, and its figures in the HTML."""
    import shutil

    import scrapbook as sb

    from workbench.analysis import discovery

    out, state, _ = three_rounds
    runs = tmp_path / "runs"
    shutil.copytree(out, runs / "hillclimb-a", symlinks=True, ignore=shutil.ignore_patterns("final", "workspaces"))
    proc = run_cli("report", str(runs), "--out", str(tmp_path / "report.html"))
    assert proc.returncode == 0, proc.stderr
    (row,) = sb.read_notebook(str(tmp_path / "report.ipynb")).scraps["discovery"].data
    history = RankedHistory.model_validate_json((out / "history.json").read_text())
    assert row["run"] == "hillclimb-a" and row["configuration"] == "hillclimb"
    assert row["final best"] == pytest.approx(state.final["metric"]) and row["published"] == 2.635
    assert row["beats published"] is True and row["vs published %"] == pytest.approx(
        100 * (state.final["metric"] - 2.635) / 2.635)
    assert row["submissions"] == history.submitted and row["valid %"] == pytest.approx(
        100 * len(history.entries) / history.submitted)
    assert row["improvements"] >= 1
    assert row["cost $"] is None or math.isnan(row["cost $"])
    page = (tmp_path / "report.html").read_text()
    assert "circle-packing-26: best sum_of_radii so far" in page and "published 2.635" in page
    assert "No session of these runs reports a cost" in page  # the CLI agent reports none
    # the best so far never gets worse, and it ends at the history's best
    _, subs, _ = discovery.load(runs)
    assert subs["best"].dropna().is_monotonic_increasing
    assert subs["best"].dropna().iloc[-1] == pytest.approx(history.entries[0].metric)


@pytest.mark.model
def test_codex_and_mini_swe_agent_are_discovery_nodes_against_the_local_model(tmp_path, model_server,
                                                                              model_server_capped, agent_cli,
                                                                              monkeypatch):
    """The CLI agents as EurekAgent's nodes: mini-swe-agent prepares and implements, Codex proposes, both
    against the local model server with the sandbox reaching only its URL. Gemma 3 270M (a base model) solves
    nothing; every session ends within its budgets with a trajectory from the CLI's own log, and the run ends
    with its history and a verdict."""
    from tests.model_server import MODEL_NAME

    monkeypatch.setenv("OPENAI_API_KEY", "none")
    mini = AgentConfig(name="mini-gemma", agent="cli", model=MODEL_NAME, network="endpoint", max_turns=2,
                       options={"preset": "mini-swe-agent", "prefix": str(agent_cli("mini-swe-agent")),
                                "env": ["OPENAI_API_KEY"], "base_url": model_server,
                                "config_file": "mini_textbased.yaml",
                                "config": {"model.model_kwargs.max_tokens": 64, "model.model_kwargs.temperature": 0}})
    codex = AgentConfig(name="codex-gemma", agent="cli", model=MODEL_NAME, network="endpoint",
                        options={"preset": "codex", "prefix": str(agent_cli("codex")), "env": ["OPENAI_API_KEY"],
                                 "base_url": model_server_capped,
                                 "system_prompt": "You are a coding agent. Run shell commands to do the task.",
                                 "config": {"model_context_window": 4096}})
    limits = Limits(prepare_sec=90, propose_sec=90, implement_sec=90)
    out, said = tmp_path / "run", []
    state = discover(TASK, mini, out, rounds=1, parallel=1, propose_agent=codex, limits=limits, say=said.append)
    assert [s.status for s in state.sessions] == ["done"] * 3, said
    for s in state.sessions:
        steps = (out / "sessions" / s.id / "session" / "trajectory.jsonl").read_text().splitlines()
        cli = json.loads(steps[0]).get("cli_version") or ""
        assert ("codex-cli" in cli) == (s.phase == "propose") and len(steps) >= 2, (s.id, steps[:2])
        assert s.agent_status in ("completed", "budget_exhausted", "timeout", "refused", "agent_error"), s
        assert s.wall_sec <= limits.for_phase(s.phase) + 10
    assert (out / "history.json").is_file() and state.final is not None


def test_a_person_is_every_sessions_agent_and_submits_to_the_scoring_service(tmp_path):
    """`discover --agent human`: the prepare, propose and implement sessions each wait for a person, who
    attaches (a real pty), reads the phase's goal and, implementing, submits with `score` as an agent's
    submit_for_score does."""
    import threading

    import pexpect

    from workbench.agents.terminal import waiting

    me = AgentConfig(name="me", agent="human", network="host")
    out, result = tmp_path / "run", {}
    run = threading.Thread(target=lambda: result.update(state=discover(TASK, me, out, rounds=1, parallel=1,
                                                                       limits=LIMITS, say=lambda _: None)))
    run.start()
    seen = []
    deadline = time.monotonic() + 600
    while run.is_alive() and time.monotonic() < deadline:
        found = waiting(out)
        if not found:
            time.sleep(0.3)
            continue
        seen.append(found[0].name)
        child = pexpect.spawn(sys.executable, ["-m", "workbench", "attach", str(out)], encoding="utf-8",
                              timeout=300, env={**os.environ, "TERM": "xterm"})
        child.logfile_read = sys.stdout
        child.expect(r"left\] \S+ \$ ")
        child.sendline("head -c 300 /home/task/instruction.md")
        child.expect(r"left\] \S+ \$ ")
        if found[0].name.startswith("r1-i"):  # an implement session
            child.sendline("score my first try")
            child.expect(r"left\] \S+ \$ ")
            assert '"' in child.before and "Traceback" not in child.before, child.before
        child.sendline("finish")
        child.expect(pexpect.EOF)
        while found[0] in waiting(out):  # the door goes when the session ends
            time.sleep(0.1)
    run.join(60)
    state = result["state"]
    assert seen == [s.id for s in state.sessions] and [s.phase for s in state.sessions] == [
        "prepare", "propose", "implement"], seen
    assert [(s.status, s.agent_status) for s in state.sessions] == [("done", "completed")] * 3
    attempts = (out / "sessions" / seen[-1] / "session" / "scoring" / "attempts.jsonl").read_text().splitlines()
    assert len(attempts) == 1  # the person's one submission, evaluated by the hidden service
