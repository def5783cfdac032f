"""What a user sees on long work and on mistakes of their machine: stage lines as they happen, one
line (no traceback) for a folder that cannot be written, a full disk, a refusing results store, an
unreachable scheduler or judge, Ctrl-C; and the help a newcomer reads (issue 18, items 6-9 and 14)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import REPO, as_in_a_terminal, free_port, run_cli, write_task
from workbench.cli import hoist_verbose


def _one_line_error(proc, needle: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and needle in errors[0], proc.stderr
    return errors[0]


def _confined(*bwrap_args: str) -> list[str]:
    """The CLI under a mount namespace where one folder is read-only or tiny (root writes anywhere else)."""
    return ["bwrap", "--dev-bind", "/", "/", *bwrap_args, "--", sys.executable, "-m", "workbench"]


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=600,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"}, **kw)


@pytest.fixture
def scored_run(tmp_path):
    root = write_task(tmp_path / "t")
    proc = run_cli("run", str(root), "--agent", "oracle", "--out", str(tmp_path / "run"), "--engine", "inline")
    assert proc.returncode == 0, proc.stderr
    return root, tmp_path / "run"


@pytest.mark.slow
def test_a_read_only_output_folder_is_one_line_for_every_command_that_writes(tmp_path, scored_run):
    task, run = scored_run
    ro = tmp_path / "ro"
    ro.mkdir()
    ro_run = tmp_path / "ro-run"
    subprocess.run(["cp", "-a", str(run), str(ro_run)], check=True)
    trial = ro_run / "trials" / "t__oracle__1"
    commands = {
        "run": ["run", str(task), "--agent", "oracle", "--out", str(ro / "run"), "--engine", "inline"],
        "replay": ["replay", str(task), "--submission", str(task / "solution"), "--out", str(ro / "trial")],
        "demo": ["demo", "--out", str(ro / "demo"), "--engine", "inline"],
        "report": ["report", str(run), "--out", str(ro / "report.html")],
        "index": ["index", str(ro_run)],
        "review": ["review", "set", str(trial), "v2", "1", "--reviewer", "Ada"],
    }
    for name, args in commands.items():
        proc = _run(_confined("--ro-bind", str(ro), str(ro), "--ro-bind", str(ro_run), str(ro_run)) + args)
        line = _one_line_error(proc, "")
        assert any(s in line for s in ("Read-only file system", "readonly database", "unable to open database")), \
            (name, line)
    assert list(ro.iterdir()) == []


@pytest.mark.slow
def test_a_full_disk_is_one_line_naming_the_file(tmp_path, scored_run):
    task, _ = scored_run
    full = tmp_path / "full"
    full.mkdir()
    big = task / "solution" / "reproduce.sh"
    big.write_text("mkdir -p results\nhead -c 3000000 /dev/zero > results/big.bin\n"
                   "echo '{\"value\": 42}' > results/value.json\n")
    proc = _run(_confined("--size", "1000000", "--tmpfs", str(full))
                + ["replay", str(task), "--submission", str(task / "solution"), "--out", str(full / "trial")])
    assert "No space left on device (free some space)" in _one_line_error(proc, "No space left on device")


def test_an_output_path_under_a_regular_file_is_one_line(tmp_path):
    """ENOTDIR: `--out afile/sub` with afile a regular file."""
    root = write_task(tmp_path / "t")
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    for args in (["run", str(root), "--agent", "oracle", "--out", str(afile / "sub"), "--engine", "inline"],
                 ["replay", str(root), "--submission", str(root / "solution"), "--out", str(afile / "sub")]):
        proc = run_cli(*args)
        line = _one_line_error(proc, "Not a directory")
        assert "a part of the path is a file, not a folder" in line and str(afile) in line, line
    assert afile.read_text() == "not a folder"


@pytest.mark.slow
def test_a_results_store_that_cannot_be_opened_is_one_line(scored_run, tmp_path):
    _, run = scored_run
    proc = run_cli("index", str(run), "--db", f"sqlite:///{tmp_path}/no/such/dir/x.db")
    _one_line_error(proc, "unable to open database file")


@pytest.mark.slow
def test_an_unreachable_dask_scheduler_is_refused_before_run_json_is_written(tmp_path):
    root = write_task(tmp_path / "t")
    matrix = tmp_path / "m.toml"
    matrix.write_text(f'tasks = ["{root}"]\n[[agents]]\nname = "nop"\nagent = "nop"\n')
    address = f"tcp://127.0.0.1:{free_port()}"
    proc = run_cli("batch", str(matrix), "--out", str(tmp_path / "b"), "--executor", "dask", "--scheduler", address)
    _one_line_error(proc, f"cannot reach the Dask scheduler at {address}")
    assert not (tmp_path / "b" / "run.json").exists() and not (tmp_path / "b" / "trials").exists()




def _bwrap_children() -> set[int]:
    out = subprocess.run(["pgrep", "-f", "sleep 60"], capture_output=True, text=True).stdout.split()
    return {int(p) for p in out}


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["inline", "papermill"])  # papermill: on a warm kernel from the pool
def test_ctrl_c_says_interrupted_marks_the_trial_and_a_rerun_says_it_starts_over(tmp_path, engine):
    root = write_task(tmp_path / "slow")
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / "reproduce.sh").write_text("sleep 60\n")
    args = [sys.executable, "-m", "workbench", "run", str(root), "--agent", "replay", "-o", f"submission={sub}",
            "--out", str(tmp_path / "run"), "--engine", engine]
    before = _bwrap_children()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            start_new_session=True, preexec_fn=as_in_a_terminal)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (_bwrap_children() - before):
        time.sleep(0.2)
    assert _bwrap_children() - before, "the replay never started"
    os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C: the whole foreground group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "interrupted" in err and "the same command runs it again" in err
    trial = json.loads((tmp_path / "run/trials/slow__replay__1/trial.json").read_text())
    assert trial["status"] == "interrupted" and trial["stages"]["replay"]["error"] == "interrupted"
    time.sleep(1)
    assert not (_bwrap_children() - before), "the sandbox outlived Ctrl-C"
    (sub / "reproduce.sh").write_text("mkdir -p results\necho '{\"value\": 42}' > results/value.json\n")
    again = _run(args)
    assert again.returncode == 0, again.stderr
    assert "attempt 1 was interrupted" in again.stderr and "running it again from scratch" in again.stderr


@pytest.mark.slow
def test_run_prints_each_stage_and_waiting_for_free_cores_while_it_happens(tmp_path):
    from workbench.sandbox.cpus import reserve_cpus

    every = len(os.sched_getaffinity(0))
    root = write_task(tmp_path / "t", cpus=every)  # every core, so a holder of any core makes it wait
    held = threading.Event()
    release = threading.Event()

    def hold():
        with reserve_cpus(every):
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    threading.Timer(12.0, release.set).start()  # past the session stage: the replay waits
    proc = run_cli("run", str(root), "--agent", "oracle", "--out", str(tmp_path / "run"))  # papermill kernels
    holder.join()
    assert proc.returncode == 0, proc.stderr
    lines = [line.split("  ", 1)[1] for line in proc.stderr.splitlines() if "  " in line]
    stages = [line for line in lines if line.split(":")[0] in ("session", "replay", "score", "review")]
    assert [s.split(":")[0] for s in stages] == ["session", "session", "replay", "replay", "score", "score",
                                                 "review", "review"]
    assert stages[0] == "session: started" and stages[-1].startswith("review: done in ")
    waiting = [i for i, line in enumerate(lines) if line.startswith("waiting for")]
    got = [i for i, line in enumerate(lines) if line.startswith("got core(s)")]
    assert waiting and got and lines.index("replay: started") < waiting[0] < got[0]
    seconds = float(lines[got[0]].split("after waiting ")[1].split(" s")[0])
    assert seconds >= 2.0  # the wait was shown while it happened, and how long it lasted


def test_env_install_says_when_a_real_install_starts_and_ends(tmp_path, monkeypatch):
    root = write_task(tmp_path / "t")
    (root / "environment" / "install.sh").write_text('mkdir -p "$WORKBENCH_ENV/bin"; echo building-things\n')
    monkeypatch.setenv("WORKBENCH_ENVS", str(tmp_path / "envs"))
    proc = run_cli("env", "install", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "installing the environment of t into" in proc.stderr and "environment of t installed in" in proc.stderr
    assert "building-things" in proc.stdout + proc.stderr  # install.sh's own output streams through
    again = run_cli("env", "install", str(root))
    assert "installing" not in again.stderr  # already there: nothing to wait for


def test_a_judge_model_without_an_endpoint_is_refused_before_any_trial(tmp_path, monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "WORKBENCH_JUDGE_BASE_URL", "WORKBENCH_JUDGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    root = write_task(tmp_path / "t")
    proc = run_cli("run", str(root), "--agent", "oracle", "--out", str(tmp_path / "run"), "--judge-model", "m")
    _one_line_error(proc, "judge model 'm' has no endpoint: set WORKBENCH_JUDGE_BASE_URL")
    assert not (tmp_path / "run").exists()


JUDGED = {"id": "r", "sub_tasks": [
    {"id": "E", "task_category": "Execution", "check": {"kind": "replay_succeeded"}},
    {"id": "J", "task_category": "Validation", "method": "judge", "requirements": "the log says fine",
     "evidence_inputs": [{"path": "submission/results/log.txt"}]}]}


@pytest.mark.slow
def test_an_unreachable_judge_says_so_and_that_the_trial_needs_rescoring(tmp_path, monkeypatch):
    task = write_task(tmp_path / "t", rubric=JUDGED)
    trial = tmp_path / "trial"
    assert run_cli("replay", str(task), "--submission", str(task / "solution"), "--out", str(trial)).returncode == 0
    url = f"http://127.0.0.1:{free_port()}/v1"
    monkeypatch.setenv("WORKBENCH_JUDGE_BASE_URL", url)
    monkeypatch.setenv("WORKBENCH_JUDGE_MAX_ATTEMPTS", "x")
    _one_line_error(run_cli("score", str(task), "--trial", str(trial), "--judge-model", "m"),
                    "WORKBENCH_JUDGE_MAX_ATTEMPTS='x': expected a positive integer")
    monkeypatch.setenv("WORKBENCH_JUDGE_MAX_ATTEMPTS", "2")  # one retry, after 1 s (5 attempts wait 15 s)
    proc = run_cli("score", str(task), "--trial", str(trial), "--judge-model", "m")
    assert proc.returncode == 0, proc.stderr
    assert "failed 2 times" in proc.stdout + proc.stderr
    assert "1 withheld" in proc.stdout and f"judge unreachable: model endpoint {url}" in proc.stdout
    assert f"this trial needs rescoring: workbench score {task} --trial {trial} --judge-model m" in proc.stdout
    assert json.loads((trial / "scores.json").read_text())["needs_rescoring"] is True


@pytest.mark.slow
def test_a_changed_configuration_names_the_field_that_changed(tmp_path):
    root = write_task(tmp_path / "t")
    out = str(tmp_path / "run")
    assert run_cli("run", str(root), "--agent", "nop", "--out", out, "--engine", "inline").returncode == 0
    proc = run_cli("run", str(root), "--agent", "nop", "--out", out, "--engine", "inline", "--attempt", "2",
                   "--max-turns", "7")
    _one_line_error(proc, "configuration 'nop' differs from the one recorded")
    assert "max_turns: null -> 7" in proc.stderr and "--name for a new configuration" in proc.stderr


@pytest.mark.slow
def test_a_changed_batch_configuration_names_the_field_on_resume(tmp_path):
    root = write_task(tmp_path / "t")
    matrix = tmp_path / "m.toml"
    body = f'tasks = ["{root}"]\nengine = "inline"\n[[agents]]\nname = "nop"\nagent = "nop"\n'
    matrix.write_text(body)
    assert run_cli("batch", str(matrix), "--out", str(tmp_path / "b")).returncode == 0
    matrix.write_text(body + "max_turns = 3\n")
    proc = run_cli("batch", str(matrix), "--out", str(tmp_path / "b"), "--resume")
    _one_line_error(proc, "agents[nop].max_turns: null -> 3")
    matrix.write_text(body)
    again = run_cli("batch", str(matrix), "--out", str(tmp_path / "b"), "--resume")
    assert again.returncode == 0 and "resume: 1 kept, 0 interrupted re-run from scratch, 0 not run yet" in again.stderr


def test_version_and_verbose_after_the_verb():
    from workbench import __version__

    assert run_cli("--version").stdout.strip() == f"workbench {__version__}"
    proc = run_cli("task", "list", "tasks", "-v")
    assert proc.returncode == 0 and "h2-pes" in proc.stdout
    assert hoist_verbose(["run", "t", "-v", "--", "-v"]) == ["-v", "run", "t", "--", "-v"]
    assert hoist_verbose(["task", "list"]) == ["task", "list"]


def test_every_option_and_command_has_help_text():
    import typer.main

    from workbench.cli import app

    missing = []

    def walk(cmd, path):
        if not (cmd.help or "").strip():
            missing.append(" ".join(path) or "workbench")
        for p in cmd.params:
            if p.param_type_name == "option" and not (p.help or "").strip():
                missing.append(f"{' '.join(path)} {p.opts[0]}")
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    assert missing == []


def test_papers_are_cited_by_name_not_by_internal_document_numbers():
    texts = {"README.md": (REPO / "README.md").read_text()}
    # the README's text moved to the documentation site
    texts |= {str(p.relative_to(REPO)): p.read_text() for p in (REPO / "docs").glob("*.md")}
    texts |= {str(p.relative_to(REPO)): p.read_text() for p in (REPO / "notebooks").rglob("*.ipynb")}
    texts |= {str(p.relative_to(REPO)): p.read_text() for p in (REPO / "workbench" / "analysis").glob("*.py")}
    import re

    assert {k for k, v in texts.items() if re.search(r"\bseed 00\d", v, re.IGNORECASE)} == set()


def test_a_stage_line_cannot_rewrite_the_terminal(capsys):
    """Stage lines carry error texts and kernel warnings a submission can shape (its file names)."""
    from workbench.cli.common import stage_line as _stage_line

    _stage_line("replay: SandboxSetupError: results/\x1b[2J\x1b]0;pwned\x07x.txt\nfake line after 1.0 s")
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and err.count("\n") == 1
    assert err.split("  ", 1)[1] == "replay: SandboxSetupError: results/x.txt fake line after 1.0 s\n"
