"""A person as the agent: driven through a real pty (pexpect) as a person at a terminal would, on both sandboxes.
The session's shell is the same sandbox an agent's tool calls get, and the trial after it is the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.conftest import write_task
from tests.interop import harbor, peers_available
from workbench.paths import TrialPaths

PROMPT = r"left\] \S+ \$ "
REPRODUCE = ("printf '%s\\n' 'mkdir -p results' 'echo \"{\\\"value\\\": 42}\" > results/value.json' "
             "'echo fine > results/log.txt' > reproduce.sh")


def workbench_run(task: Path, out: Path, backend: str, *extra: str) -> pexpect.spawn:
    child = pexpect.spawn(sys.executable, ["-m", "workbench", "run", str(task), "--agent", "human", "--out", str(out),
                                           "--sandbox", backend, "--engine", "inline", *extra],
                          encoding="utf-8", timeout=120, dimensions=(30, 110), env={**os.environ, "TERM": "xterm"})
    child.logfile_read = sys.stdout
    return child


def ran(child: pexpect.spawn, line: str) -> str:
    """Type a command at the prompt; what it printed up to the next prompt."""
    child.sendline(line)
    child.expect(PROMPT)
    return child.before


def test_a_person_builds_a_submission_finishes_and_the_trial_is_scored(backend, tmp_path):
    task = write_task(tmp_path / "mini")
    child = workbench_run(task, tmp_path / "run", backend, "-o", "person=Ada")
    child.expect(PROMPT, timeout=180)
    assert "value 42" in ran(child, "cat /home/task/instruction.md")  # the public task, where an agent has it
    ran(child, REPRODUCE)
    assert "42" in ran(child, "bash reproduce.sh && cat results/value.json")
    child.sendline("finish")
    child.expect("R = ", timeout=300)
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0, child.before
    tp = TrialPaths(tmp_path / "run" / "trials" / "mini__human__1")
    delivery = json.loads(tp.delivery.read_text())
    assert (delivery["agent"], delivery["agent_status"], delivery["status"]) == ("human", "completed", "delivered")
    assert json.loads(tp.provenance.read_text())["status"] == "succeeded"  # replayed from scratch, not trusted
    scores = json.loads(tp.scores.read_text())
    assert scores["R"] > 0.5, scores
    usage = json.loads(tp.usage.read_text())
    assert usage["person"]["name"] == "Ada" and usage["person"]["commands"] == 3
    assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (0, 0, None)  # time only
    steps = [json.loads(line) for line in tp.trajectory.read_text().splitlines()]
    assert [s["message"] for s in steps] == ["cat /home/task/instruction.md", REPRODUCE,
                                             "bash reproduce.sh && cat results/value.json"]
    assert steps[2]["observations"][0]["content"].strip().startswith('{"value": 42}')
    assert "[exit code 0]" in steps[2]["observations"][0]["content"]
    # the recording: asciinema's own reader plays it back, with what the person saw
    cast = subprocess.run([str(Path(sys.executable).with_name("asciinema")), "cat", str(tp.terminal_cast)],
                          capture_output=True, text=True, timeout=60)
    assert cast.returncode == 0, cast.stderr
    assert '{"value": 42}' in cast.stdout and "7770" not in cast.stdout  # markers are not shown or kept
    assert not tp.terminal_door.exists()  # nothing to attach to once the session ended
    if peers_available():
        export = tmp_path / "atif.json"
        export.write_text(subprocess.run([sys.executable, "-m", "workbench", "trajectory", str(tp.root)],
                                         capture_output=True, text=True, check=True).stdout)
        verdict = harbor("trajectory", [export])
        assert all(not errors for errors in verdict.values()), verdict


def test_the_budgets_end_closes_a_session_that_does_not_finish(tmp_path):
    task = write_task(tmp_path / "mini")
    # the mini task's agent budget is 3600 s: 0.005 of it is 18 s, the warning due at 4.5 s left
    child = workbench_run(task, tmp_path / "run", "bwrap", "--time-scale", "0.005")
    child.expect(PROMPT, timeout=180)
    time.sleep(14.5)
    child.sendline("")
    child.expect(r"\[workbench\] 0m0\ds left: run `finish`")
    child.expect("the session is over", timeout=30)  # nobody typed finish
    child.expect(pexpect.EOF, timeout=300)
    tp = TrialPaths(tmp_path / "run" / "trials" / "mini__human__1")
    delivery = json.loads(tp.delivery.read_text())
    assert delivery["agent_status"] == "timeout" and delivery["wall_sec"] < 25, delivery
    assert delivery["status"] == "starter_only"  # and it is scored as a model's timeout is
    assert json.loads(tp.scores.read_text())["R"] == 0


@pytest.mark.attack
def test_a_persons_shell_is_contained_as_an_agents_is(backend, tmp_path):
    task = write_task(tmp_path / "mini")
    secret = task / "tests" / "SECRET.txt"
    child = workbench_run(task, tmp_path / "run", backend)
    child.expect(PROMPT, timeout=180)
    assert "Read-only file system" in ran(child, "echo x > /home/task/instruction.md")
    # tokens the shell computes ($((7))), so the echo of the typed line never matches them
    assert "O7K" not in ran(child, f"touch /usr/planted {tmp_path}/planted && echo O$((7))K")
    assert "private-token" not in ran(child, f"cat {secret} /proc/1/root{secret}; grep -rs private-$(echo token) "
                                             "/home /tmp /run /opt /root /srv /mnt 2>/dev/null | head -3")
    out = ran(child, "python3 -c \"import urllib.request as u; u.urlopen('http://1.1.1.1', timeout=5)\" "
                     "2>/dev/null && echo RE$((1))ACHED || echo UNRE$((1))ACHABLE")
    assert "UNRE1ACHABLE" in out and "RE1ACHED" not in out.replace("UNRE1ACHABLE", "")
    assert "O7K" not in ran(child, "sudo -n true 2>/dev/null && echo O$((7))K")
    child.sendline("finish")
    child.expect(pexpect.EOF, timeout=300)
    assert not (tmp_path / "planted").exists() and not Path("/usr/planted").exists()


@pytest.mark.attack
def test_another_user_on_the_machine_cannot_type_into_a_persons_session(tmp_path):
    """The door is a Unix socket in a 0700 directory of the workbench's user: nobody else can attach."""
    task = write_task(tmp_path / "mini")
    child = workbench_run(task, tmp_path / "run", "bwrap")
    child.expect(PROMPT, timeout=180)
    door = json.loads(TrialPaths(tmp_path / "run" / "trials" / "mini__human__1").terminal_door.read_text())
    intruder = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
         "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
         "s.sendall(b'{}\\necho intruder > planted.txt\\n'); print('connected')", door["socket"]],
        capture_output=True, text=True, timeout=30)
    assert intruder.returncode != 0 and "Permission denied" in intruder.stderr, intruder
    assert "planted.txt" not in ran(child, "ls -a")
    child.sendline("finish")
    child.expect(pexpect.EOF, timeout=300)


@pytest.mark.attack
def test_markers_printed_as_fast_as_the_shell_can_are_counted_not_recorded_without_bound(tmp_path):
    """The step markers are the shell's own output, so the person (or a program they run) can print them in a
    loop: each would be a record written on the host. Past MAX_STEPS they are counted, not recorded."""
    from workbench.agents.human import MAX_STEPS

    child = workbench_run(write_task(tmp_path / "mini"), tmp_path / "run", "bwrap")
    child.expect(PROMPT, timeout=180)
    child.logfile_read = None  # 10,050 markers are not worth printing
    ran(child, f"for i in $(seq {MAX_STEPS + 50}); do printf '\\033]7770;0;eA==\\a'; done")
    child.sendline("finish")
    child.expect(pexpect.EOF, timeout=300)
    tp = TrialPaths(tmp_path / "run" / "trials" / "mini__human__1")
    steps = tp.trajectory.read_text().splitlines()
    assert len(steps) == MAX_STEPS + 1 and "counted in usage.json" in steps[-1]
    assert json.loads(tp.usage.read_text())["person"]["commands"] == MAX_STEPS + 51  # + the loop itself


def test_a_terminal_that_stops_reading_is_dropped_and_the_person_attaches_again(tmp_path):
    """A terminal that stops reading (suspended, frozen) while the shell prints cannot hold the session: it is
    dropped after SEND_TIMEOUT_SEC, and the next `workbench attach` gets the shell."""
    import socket

    task = write_task(tmp_path / "mini")
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(f'tasks = ["{task}"]\nattempts = 1\nengine = "inline"\n[[agents]]\nname = "ada"\n'
                      'agent = "human"\n')
    run = tmp_path / "run"
    batch = subprocess.Popen([sys.executable, "-m", "workbench", "batch", str(matrix), "--out", str(run),
                              "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tp = TrialPaths(run / "trials" / "mini__ada__1")
    try:
        deadline = time.monotonic() + 120
        while not tp.terminal_door.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        frozen = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        frozen.connect(json.loads(tp.terminal_door.read_text())["socket"])
        frozen.sendall(b'{"cols": 80, "rows": 24}\nyes | head -c 3000000; echo\n')  # then never reads
        time.sleep(2)
        child = pexpect.spawn(sys.executable, ["-m", "workbench", "attach", str(run)], encoding="utf-8",
                              timeout=60, env={**os.environ, "TERM": "xterm"})
        child.expect(PROMPT)  # the flood ended while nobody read it; this terminal has the shell
        child.sendline("echo O$((7))K")
        child.expect("O7K")
        child.expect(PROMPT)
        child.sendline("finish")
        child.expect(pexpect.EOF)
        assert batch.wait(timeout=120) == 0
        frozen.close()
    finally:
        if batch.poll() is None:
            batch.kill()
    assert json.loads(tp.delivery.read_text())["agent_status"] == "completed"


def test_long_commands_are_recorded_within_the_log_bound_and_an_observation_is_cut_once(tmp_path):
    """Each marker names a command of up to 64 KB, recorded twice per step: 10,000 of them would be over a
    gigabyte on the host. The steps stop at the session log's bound; a long output is cut once, by the
    trajectory, with one note of how much (not a note inside a note)."""
    from workbench.agents.base import Trajectory
    from workbench.agents.human import _Steps
    from workbench.agents.public_task import OBSERVATION_LIMIT

    trajectory = Trajectory(tmp_path / "trajectory.jsonl")
    steps = _Steps(trajectory, max_bytes=1 << 20)
    steps.record("make", 0, "make\n" + "x" * 3 * OBSERVATION_LIMIT)
    first = json.loads(trajectory.path.read_text().splitlines()[0])
    assert first["observations"][0]["content"].count("characters truncated") == 1
    for i in range(100):
        steps.record(f"echo {i} " + "y" * 48_000, 0, "")
    assert trajectory.path.stat().st_size < (1 << 20) + 100_000
    lines = trajectory.path.read_text().splitlines()
    assert "counted in usage.json" in lines[-1] and len(lines) < 20
    assert steps.count == 101  # every command is still counted
