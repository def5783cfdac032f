"""A real run for the export tests, made once: the mini task x {oracle, nop, a scripted openai agent} x 2
attempts through the inline engine (a few seconds a trial)."""

from __future__ import annotations

import pytest

from tests.conftest import MATRIX, write_task
from tests.fake_openai import ScriptedServer, reply

SCRIPTED = """
[[agents]]
name = "scripted"
agent = "openai"
model = "scripted-1"
options = {{ base_url = "{url}", api_key_env = "WB_EXPORT_TEST_KEY" }}
"""


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    from workbench.batch.run import run_batch

    root = tmp_path_factory.mktemp("export-run")
    task = write_task(root / "mini")
    turns = [reply("looking around", [("bash", {"command": "ls"})], usage=(50, 10)),
             reply("", [("finish", {"summary": "done"})], usage=(60, 5))]
    with ScriptedServer(turns * 2) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("WB_EXPORT_TEST_KEY", "sk-not-exported")
        matrix = root / "matrix.toml"
        matrix.write_text(MATRIX.format(task=task, attempts=2) + SCRIPTED.format(url=server.url))
        result = run_batch(matrix, root / "run", engine="inline", workers=1, progress=False)
    assert result.counts.get("complete") == 6, result.counts
    return root / "run"
