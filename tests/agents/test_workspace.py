"""The session's workspace and a GPU task's GPUs (EurekAgent's GPU helper): a session sees its task's GPU only
while it holds it, another session asking meanwhile is told who holds it, and every hold is recorded. GPUs are
simulated (character devices named as the driver names them: tests/conftest.py ``simulated_gpus``)."""

from __future__ import annotations

import json
import threading

import pytest

from tests.fake_openai import ScriptedServer, reply
from tests.sandbox.test_gpus import gpu_task
from workbench.agents import PublicTask
from workbench.agents.workspace import Workspace
from workbench.batch.matrix import AgentConfig
from workbench.paths import TrialPaths
from workbench.sandbox import gpus
from workbench.sandbox.environments import environment_for
from workbench.sandbox.gpus import GpusBusy
from workbench.session.ledger import read_usage
from workbench.session.run import run_session

SEEN = "ls /dev | grep nvidia | tr '\\n' ' '; echo \"[${CUDA_VISIBLE_DEVICES-unset}]\""


def _workspace(task, root, backend) -> Workspace:
    env, image = environment_for(task, backend)
    return Workspace(PublicTask.of(task), root, env_dir=env["dir"], sandbox=backend, image=image)


def test_a_session_sees_its_gpu_only_while_it_holds_it_and_another_session_is_told_who_holds_it(
        simulated_gpus, tmp_path, backend):
    simulated_gpus(1)
    task = gpu_task(tmp_path / "t", 1)
    with _workspace(task, tmp_path / "a", backend) as a, _workspace(task, tmp_path / "b", backend) as b:
        a.gpus.owner, b.gpus.owner = "session a", "session b"
        assert a.run(SEEN, 60).output.strip() == "[unset]"  # default-deny: not acquired, not there
        a.acquire_gpus()
        seen = a.run(SEEN, 60).output
        assert "nvidia0" in seen and seen.strip().endswith("[0]"), seen
        assert gpus.lock_owner(0).startswith("session a")
        with pytest.raises(GpusBusy, match=r"1 GPU\(s\) not free after 0.5 s; held by: session a"):
            b.acquire_gpus(wait_sec=0.5)
        assert b.run(SEEN, 60).output.strip() == "[unset]"
        assert a.release_gpus() and not a.release_gpus()
        assert a.run(SEEN, 60).output.strip() == "[unset]"
        b.acquire_gpus(wait_sec=5)
        assert b.run(SEEN, 60).output.strip().endswith("[0]")
    assert gpus.lock_owner(0) is None  # closing the session gave its GPU back
    (lease,) = a.gpus.records
    assert lease["gpus"] == ["/dev/nvidia0"] and lease["owner"].startswith("session a"), lease
    assert lease["held_sec"] > 0 and lease["released_at"] and "not measured" in lease["measured"][0]["measured"]
    assert len(b.gpus.records) == 1 and b.gpus.records[0]["released_at"]  # released at the session's end


def test_a_task_without_gpus_has_none_to_acquire(simulated_gpus, tmp_path):
    simulated_gpus(1)
    task = gpu_task(tmp_path / "t", 0)
    with _workspace(task, tmp_path / "a", "bwrap") as ws:
        with pytest.raises(Exception, match=r"this task has no GPUs"):
            ws.acquire_gpus()
        assert ws.run(SEEN, 60).output.strip() == "[unset]"


@pytest.mark.slow
def test_a_tool_calling_agent_acquires_and_releases_the_gpu_and_the_session_records_the_lease(simulated_gpus,
                                                                                              tmp_path):
    """The openai agent offers acquire_gpu / release_gpu on a GPU task; an agent that cannot ask (nop) holds
    the GPU for its whole session. usage.json records each hold."""
    simulated_gpus(1)
    task = gpu_task(tmp_path / "t", 1)
    steps = [reply(tools=[("bash", {"command": SEEN})]), reply(tools=[("acquire_gpu", {"wait_sec": 5})]),
             reply(tools=[("bash", {"command": SEEN})]), reply(tools=[("release_gpu", {})]),
             reply(tools=[("bash", {"command": SEEN})]), reply(tools=[("finish", {"summary": "done"})])]
    with ScriptedServer(steps) as server:
        run_session(task, AgentConfig(name="s", agent="openai", model="scripted-1",
                                      options={"base_url": server.url}), tmp_path / "trial")
        offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
        answers = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert {"acquire_gpu", "release_gpu"} <= offered
    assert answers[0].strip().endswith("[unset]"), answers[0]
    assert json.loads(answers[1]) == {"gpus": ["/dev/nvidia0"], "CUDA_VISIBLE_DEVICES": "0",
                                      "NVIDIA_VISIBLE_DEVICES": "0"}
    assert answers[2].strip().endswith("[0]") and answers[3] == "released" and answers[4].strip().endswith("[unset]")
    (lease,) = read_usage(TrialPaths(tmp_path / "trial")).gpu_leases
    assert lease.owner.startswith("the session of trial trial") and lease.held_sec is not None

    run_session(task, AgentConfig(name="n", agent="nop"), tmp_path / "nop")
    (whole,) = read_usage(TrialPaths(tmp_path / "nop")).gpu_leases
    assert whole.gpus == ["/dev/nvidia0"] and whole.released_at
    assert gpus.lock_owner(0) is None


@pytest.mark.slow
def test_the_scoring_service_replays_on_the_gpu_its_waiting_session_holds(simulated_gpus, tmp_path):
    """A session holding the task's only GPU asks the scoring service for a score: the replay it waits on runs
    on that GPU (lent, as the session's cores are), instead of waiting for it forever."""
    simulated_gpus(1)
    task = gpu_task(tmp_path / "t", 1)
    (task.paths.starter / "reproduce.sh").write_text("test -c /dev/nvidia0 && echo \"$CUDA_VISIBLE_DEVICES\"\n")
    steps = [reply(tools=[("acquire_gpu", {})]), reply(tools=[("submit_for_score", {"description": "on it"})]),
             reply(tools=[("finish", {"summary": "done"})])]
    config = AgentConfig(name="s", agent="openai", model="scripted-1",
                         options={"base_url": "", "scoring_service": True})
    with ScriptedServer(steps) as server:
        config.options["base_url"] = server.url
        session = threading.Thread(target=run_session, args=(task, config, tmp_path / "trial"), daemon=True)
        session.start()
        session.join(240)
        assert not session.is_alive(), "the scoring service waited for the GPU its own session holds"
        answers = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert json.loads(answers[1])["replay"] == "succeeded", answers[1]  # it saw /dev/nvidia0
    assert gpus.lock_owner(0) is None
