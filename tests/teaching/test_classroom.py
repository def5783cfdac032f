"""`workbench class`: each student a named person's session of one task beside the teacher's models, one run,
one report."""

from __future__ import annotations

import json
import os
import sys
import time

import pexpect
import pytest

from tests.conftest import write_task
from workbench.agents.terminal import waiting
from workbench.batch.matrix import load_matrix
from workbench.teaching.classroom import class_matrix, write_matrix

COMPARE = """tasks = ["elsewhere"]
attempts = 3
engine = "inline"
[[agents]]
name = "scripted"
agent = "openai"
model = "m-1"
options = { base_url = "http://127.0.0.1:9/v1", api_key_env = "K", request = { temperature = 0.5, stop = ["a", "b"] } }
prices = { input_per_mtok = 1.5, output_per_mtok = 6.0 }
"""


def test_a_class_matrix_names_each_student_and_keeps_the_teachers_configurations(tmp_path):
    task = write_task(tmp_path / "mini")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "task.toml").write_text("")
    compare = tmp_path / "compare.toml"
    compare.write_text(COMPARE)
    written = write_matrix(class_matrix(task, ["Ada Lovelace", "bob"], compare), tmp_path / "class.toml")
    matrix, dirs = load_matrix(written)  # what `workbench batch` reads back
    assert dirs == [task.resolve()] and matrix.attempts == 1 and matrix.engine == "inline"
    assert [(a.name, a.agent, a.options.get("person")) for a in matrix.agents] == [
        ("ada-lovelace", "human", "Ada Lovelace"), ("bob", "human", "bob"), ("scripted", "openai", None)]
    scripted = matrix.agents[2]
    assert scripted.options["request"] == {"temperature": 0.5, "stop": ["a", "b"]}
    assert scripted.prices.output_per_mtok == 6.0


@pytest.mark.slow
def test_a_class_runs_its_students_beside_a_model_and_reports(tmp_path):
    task = write_task(tmp_path / "mini")
    compare = tmp_path / "compare.toml"
    compare.write_text('tasks = ["mini"]\nengine = "inline"\n[[agents]]\nname = "nop"\nagent = "nop"\n')
    out = tmp_path / "runs" / "class-1"
    teacher = pexpect.spawn(sys.executable, ["-m", "workbench", "class", str(task), "--student", "Ada", "--out",
                                             str(out), "--compare", str(compare), "--workers", "1"],
                            encoding="utf-8", timeout=600, env=dict(os.environ))
    teacher.logfile_read = sys.stdout
    teacher.expect("workbench attach .* --name \"Ada\"")
    deadline = time.monotonic() + 120
    while not waiting(out) and time.monotonic() < deadline:
        time.sleep(0.3)
    student = pexpect.spawn(sys.executable, ["-m", "workbench", "attach", str(out), "--name", "Ada"],
                            encoding="utf-8", timeout=120, env={**os.environ, "TERM": "xterm"})
    student.expect(r"left\] \S+ \$ ")
    student.sendline("printf '%s\\n' 'mkdir -p results' 'echo {\\\"value\\\": 42} > results/value.json' > reproduce.sh")
    student.expect(r"left\] \S+ \$ ")
    student.sendline("finish")
    student.expect(pexpect.EOF)
    teacher.expect("report: ", timeout=600)
    teacher.expect(pexpect.EOF)
    html = (out / "report.html").read_text()
    assert ">ada<" in html and ">nop<" in html and ">person<" in html
    usage = json.loads((out / "trials" / "mini__ada__1" / "session" / "usage.json").read_text())
    assert usage["person"]["name"] == "Ada"
