"""Inspect AI's own code reads our export: `workbench export inspect` on a real run, then Inspect's log
reader (in its own venv, .ci/peers) and a real `inspect view` server over HTTP."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest

from tests.conftest import free_port, http_server, required_tool_missing, run_cli
from tests.interop import INSPECT_PYTHON, inspect_available, inspect_reads
from workbench.paths import RunPaths
from workbench.scoring import Scores


@pytest.fixture(autouse=True)
def _peers():
    if not inspect_available():
        required_tool_missing("Inspect AI in its Python 3.12 venv (bash .ci/peers)")


@pytest.fixture(scope="module")
def exported(small_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("inspect-logs")
    proc = run_cli("export", "inspect", str(small_run), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote 3 Inspect logs to {out}" in proc.stdout
    return small_run, out


@pytest.fixture(scope="module")
def seen(exported):
    return inspect_reads(exported[1])


def _scores(run, trial) -> Scores:
    return Scores.model_validate_json(RunPaths(run).trial(trial).scores.read_text())


@pytest.mark.slow
def test_inspect_reads_one_log_per_configuration_with_a_sample_per_trial(exported, seen):
    run, _ = exported
    assert len(seen["listed"]) == 3
    logs = {log["model"]: log for log in seen["logs"].values()}
    assert set(logs) == {"none/oracle", "none/nop", "openai/scripted-1"}
    for model, log in logs.items():
        config = model.split("/")[-1].removesuffix("-1")
        assert log["status"] == "success" and log["task"] == "mini" and log["epochs"] == 2
        assert [(s["id"], s["epoch"]) for s in log["samples"]] == [("mini", 1), ("mini", 2)]
        assert log["header_samples"] is None and log["header_total"] == 2  # the header alone, as the viewer lists
        for s in log["samples"]:
            assert s["trial"] == f"mini__{config}__{s['epoch']}" and s["error"] is None
            ours = _scores(run, s["trial"])
            assert s["scores"] == {"R": ours.R, **ours.phases}
            assert s["tree_root"] == pytest.approx(ours.R, abs=1e-12)
        rs = [s["scores"]["R"] for s in log["samples"]]
        assert log["results"]["R"]["mean"] == pytest.approx(sum(rs) / 2)
    assert logs["none/oracle"]["samples"][0]["scores"]["R"] == 0.75  # one expert leaf still open
    assert logs["none/nop"]["samples"][0]["scores"]["R"] == 0.0


@pytest.mark.slow
def test_messages_and_model_usage_come_from_the_session(exported, seen):
    run, out = exported
    log = next(v for v in seen["logs"].values() if v["model"] == "openai/scripted-1")
    sample = log["samples"][0]
    assert [m["role"] for m in sample["messages"]] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    call_id, function, arguments = sample["messages"][2]["calls"][0]
    assert (function, arguments) == ("bash", {"command": "ls"})
    assert sample["messages"][3]["tool_call_id"] == call_id and "reproduce.sh" in sample["messages"][3]["text"]
    usage = json.loads(RunPaths(run).trial("mini__scripted__1").usage.read_text())
    assert sample["usage"] == {"openai/scripted-1": [usage["input_tokens"], usage["output_tokens"],
                                                     usage["input_tokens"] + usage["output_tokens"]]}
    assert log["usage"] == {"openai/scripted-1": 2 * (50 + 10 + 60 + 5)}
    assert all("sk-not-exported" not in p.read_text() for p in out.iterdir())  # the key stays in the run


@pytest.mark.slow
def test_inspects_reader_rejects_a_broken_log(exported, tmp_path):
    """The control: Inspect's reader really validates, so the logs above passed a check that can fail."""
    log = json.loads(next(exported[1].glob("*_oracle.json")).read_text())
    del log["samples"][0]["epoch"]
    (tmp_path / "2026-01-01T00-00-00+00-00_mini_broken.json").write_text(json.dumps(log))
    with pytest.raises(RuntimeError, match="epoch"):
        inspect_reads(tmp_path)


def _get(url: str):
    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.loads(resp.read())


@pytest.mark.slow
def test_inspect_view_lists_and_serves_the_exported_logs(exported):
    _, out = exported
    port = free_port()
    inspect = INSPECT_PYTHON.parent / "inspect"
    base = f"http://127.0.0.1:{port}/api"
    with http_server([str(inspect), "view", "--log-dir", str(out), "--port", str(port)], f"{base}/logs"):
        listing = _get(f"{base}/logs")
        names = sorted(f["name"].removeprefix("file://") for f in listing["files"])
        assert names == sorted(str(p) for p in out.glob("*.json"))
        assert sorted(f["task_id"] for f in listing["files"]) == ["nop", "oracle", "scripted"]
        query = urllib.parse.urlencode([("file", f["name"]) for f in listing["files"]])
        headers = _get(f"{base}/log-headers?{query}")  # what the viewer's list of evals shows
        assert {h["eval"]["model"]: h["results"]["scores"][0]["metrics"]["mean"]["value"] for h in headers} == {
            "none/oracle": 0.75, "none/nop": 0.0, "openai/scripted-1": 0.0}


def test_a_wrong_run_directory_is_one_line(tmp_path):
    for path in (tmp_path / "nope", tmp_path):
        proc = run_cli("export", "inspect", str(path), "--out", str(tmp_path / "out"))
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: "), proc.stderr
        assert "Traceback" not in proc.stderr
