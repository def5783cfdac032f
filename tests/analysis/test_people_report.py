"""People beside a model: a matrix of the demo task with one model configuration (a scripted model over real
HTTP) and two people (a class of two, `--agent human` configurations naming each student), the students
attaching with `workbench attach RUN --name` through real ptys; the report shows both kinds side by side."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pexpect
import pytest

from tests.conftest import DEMO
from tests.fake_openai import ScriptedServer, reply
from workbench.agents.terminal import waiting

PROMPT = r"left\] \S+ \$ "
MATRIX = """
tasks = ["{task}"]
attempts = 1
[[agents]]
name = "scripted"
agent = "openai"
model = "scripted-1"
options = {{ base_url = "{url}", api_key_env = "WB_PEOPLE_TEST_KEY" }}
[[agents]]
name = "ada"
agent = "human"
options = {{ person = "Ada" }}
[[agents]]
name = "bob"
agent = "human"
options = {{ person = "Bob" }}
"""


def attach_as(person: str, run) -> pexpect.spawn:
    child = pexpect.spawn(sys.executable, ["-m", "workbench", "attach", str(run), "--name", person],
                          encoding="utf-8", timeout=120, dimensions=(30, 110), env={**os.environ, "TERM": "xterm"})
    child.logfile_read = sys.stdout
    child.expect(PROMPT)
    return child


def ada_reproduces_the_workflow(child: pexpect.spawn) -> None:
    """Ada writes the reference workflow by hand (a here-document, line by line, as typed)."""
    child.sendline("mkdir -p src && cat > src/h2_pes.py <<'PY'")
    for line in (DEMO / "solution" / "src" / "h2_pes.py").read_text().splitlines():
        child.sendline(line)
    child.sendline("PY")
    child.expect(PROMPT)
    child.sendline("printf '%s\\n' 'set -euo pipefail' 'cd \"$(dirname \"$0\")\"' "
                   "'python3 src/h2_pes.py --out results' > reproduce.sh && wc -l src/h2_pes.py")
    child.expect(PROMPT)


def bob_gives_up(child: pexpect.spawn) -> None:
    child.sendline("cat /home/task/instruction.md | head -3")
    child.expect(PROMPT)


@pytest.mark.slow
def test_a_report_shows_two_people_beside_a_model_configuration(tmp_path):
    run = tmp_path / "run"
    turns = [reply("a quick guess", [("bash", {"command": "echo 'mkdir -p results' >> reproduce.sh"})]),
             reply("", [("finish", {"summary": "done"})])]
    with ScriptedServer(turns) as server:
        matrix = tmp_path / "matrix.toml"
        matrix.write_text(MATRIX.format(task=DEMO, url=server.url))
        log = open(tmp_path / "batch.log", "w")  # noqa: SIM115 - closed below
        batch = subprocess.Popen([sys.executable, "-m", "workbench", "batch", str(matrix), "--out", str(run),
                                  "--workers", "1", "--engine", "inline"], stdout=log, stderr=subprocess.STDOUT,
                                 env={**os.environ, "WB_PEOPLE_TEST_KEY": "sk-test"})
        try:
            people = {"Ada": ada_reproduces_the_workflow, "Bob": bob_gives_up}
            deadline = time.monotonic() + 900
            while people and time.monotonic() < deadline and batch.poll() is None:
                found = waiting(run)
                if not found:
                    time.sleep(0.5)
                    continue
                person = json.loads((found[0] / "session" / "terminal.json").read_text())["person"]
                child = attach_as(person, run)
                people.pop(person)(child)
                child.sendline("finish")
                child.expect(pexpect.EOF, timeout=120)
            assert not people, f"never attached: {people}"
            assert batch.wait(timeout=1200) == 0, (tmp_path / "batch.log").read_text()[-3000:]
        finally:
            if batch.poll() is None:
                batch.kill()
            log.close()
    report = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "workbench", "report", str(run), "--out", str(report)], check=True,
                   timeout=900)
    from workbench.analysis import frames
    from workbench.analysis.metrics import model_table, time_per_stage

    o = frames.outcomes(frames.load_index(run, tables=("trials",), columns=frames.ANALYSED)["trials"])
    table = model_table(o).set_index("config")
    assert table.loc["ada", "who"] == "person" and table.loc["bob", "who"] == "person"
    assert table.loc["scripted", "who"] == "agent"
    assert table.loc["ada", "partial"] > table.loc["bob", "partial"]  # Ada's workflow replayed and scored
    spent = time_per_stage(o).set_index("config")
    assert set(spent["who"]) == {"person", "agent"} and spent.loc["ada", "session"] > 0
    html = report.read_text()
    for name in ("ada", "bob", "scripted", "person"):
        assert f">{name}<" in html, name
