"""What a stage notebook shows: tables and figures of a small trial (session, replay, scores, the judge's audit,
the review queue), and the glue that carries a stage's summary back to the pipeline."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from tests.conftest import MINI_RUBRIC, config, write_task
from tests.fake_openai import ScriptedServer, reply
from workbench.evidence import read_manifest
from workbench.paths import TrialPaths
from workbench.trial import displays, stages

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
SOLUTION = ('mkdir -p results\necho \'{"value": 42}\' > results/value.json\necho fine > results/log.txt\n'
            f"echo {PNG} | base64 -d > results/fig.png\nfor i in $(seq 1 50); do echo line $i; done\n")


def _rubric() -> dict:
    rubric = copy.deepcopy(MINI_RUBRIC)
    validate = rubric["sub_tasks"][2]["sub_tasks"]
    validate[1]["evidence_inputs"].append({"path": "submission/results/fig.png"})
    validate.append({"id": "j1", "weight": 1, "task_category": "Validation", "method": "judge",
                     "title": "the log reports success", "requirements": "results/log.txt says the run was fine",
                     "evidence_inputs": [{"path": "submission/results/log.txt"}]})
    return rubric


@pytest.fixture(scope="module")
def trial(tmp_path_factory):
    """The oracle through the four stages, its judge leaf scored by a scripted judge: (trial dir, summaries)."""
    root = tmp_path_factory.mktemp("displays")
    task = write_task(root / "mini", rubric=_rubric())
    (task / "solution" / "reproduce.sh").write_text(SOLUTION)
    trial_dir = root / "mini__oracle__1"
    verdict = json.dumps({"score": 1, "reason": "the log says fine", "checks": ["read log.txt"],
                          "evidence_access": "ok"})
    with ScriptedServer([reply(verdict, usage=(1000, 50))]) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBENCH_JUDGE_BASE_URL", server.url)
        mp.setenv("WORKBENCH_JUDGE_API_KEY", "k")
        out = {"session": stages.session(str(task), str(trial_dir), config("oracle").model_dump()),
               "replay": stages.replay(str(task), str(trial_dir)),
               "score": stages.score(str(task), str(trial_dir), judge={"model": "judge-1"}),
               "review": stages.review(str(task), str(trial_dir))}
    assert out["score"]["judge_usage"]["calls_made"] == 1
    return trial_dir, out


@pytest.mark.slow
def test_the_file_tree_lists_sizes_and_short_hashes(trial):
    trial_dir, _ = trial
    ev = TrialPaths(trial_dir).evidence
    df = displays.file_tree(ev)
    assert list(df.columns) == ["path", "bytes", "sha256"]
    rows = df.set_index("path")
    assert rows.loc["submission/results/value.json", "bytes"] == len('{"value": 42}\n')
    manifest = read_manifest(ev)
    assert all(rows.loc[p, "sha256"] == h[:16] for p, h in manifest.items())


def test_the_file_tree_shows_a_link_as_its_target_and_stops_at_the_limit(tmp_path):
    (tmp_path / "a.txt").write_text("abc")
    (tmp_path / "b.txt").symlink_to("/etc/passwd")
    link = displays.file_tree(tmp_path).set_index("path").loc["b.txt"]
    assert link["sha256"] == "-> /etc/passwd" and link.isna()["bytes"]  # never read through
    assert displays.file_tree(tmp_path, limit=1)["path"].tolist() == ["a.txt", "... (first 1 shown)"]


def test_the_session_tables_show_the_delivery_usage_and_turns(trial):
    trial_dir, out = trial
    table = displays.delivery_table(trial_dir)
    assert table.loc["status", "value"] == "delivered" and table.loc["agent", "value"] == "oracle"
    assert table.loc["usage.wall_sec", "value"] == out["session"]["wall_sec"]
    assert json.loads(table.loc["budget", "value"])["wall_sec"] == out["session"]["budget"]["wall_sec"]
    turns = displays.trajectory_table(trial_dir)
    assert turns["message"].tolist() == ["copied the reference solution into the submission"]


def test_the_replay_tables_show_provenance_without_hash_lists_and_the_log_tail(trial):
    trial_dir, _ = trial
    prov = displays.provenance_table(trial_dir)
    assert prov.loc["status", "value"] == "succeeded"
    assert "source_hashes_before" not in prov.index and "source_hashes_after" not in prov.index
    assert prov.loc["sources", "value"].startswith("1 files, digest ")
    assert displays.log_tail(trial_dir, lines=2).splitlines() == ["--- stdout: last 2 of 50 lines ---",
                                                                  "line 49", "line 50"]
    assert displays.log_tail(trial_dir, "stderr") == "--- stderr: last 0 of 0 lines ---"


def test_the_leaf_table_runs_by_phase_and_the_chart_shows_earned_of_available(trial):
    trial_dir, out = trial
    leaves = displays.leaf_table(trial_dir)
    assert leaves["id"].tolist() == ["m1", "e1", "v1", "v2", "j1"]
    assert leaves["phase"].tolist() == ["modeling", "execution", "validation", "validation", "validation"]
    assert dict(zip(leaves["id"], leaves["status"], strict=True))["v2"] == "pending_review"
    fig = displays.earned_weight_chart(trial_dir)
    ax = fig.axes[0]
    assert ax.get_title() == f"R = {out['score']['R']:.3f}  full = False  coverage = {out['score']['coverage']:.2f}"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["modeling", "execution", "validation"]
    assert displays.png(fig).data.startswith(b"\x89PNG")


def test_the_judge_audit_shows_the_verdict_and_the_evidence_it_saw(trial):
    trial_dir, _ = trial
    [row] = displays.judge_audit(trial_dir).to_dict("records")
    log_hash = read_manifest(TrialPaths(trial_dir).evidence)["submission/results/log.txt"]
    assert (row["id"], row["status"], row["score"], row["reason"]) == ("j1", "scored", 1.0, "judge: the log says fine")
    assert row["checks"] == "read log.txt" and row["tokens"] == 1050 and row["cached"] is False
    assert row["evidence seen"] == f"submission/results/log.txt ({log_hash[:12]})"


def test_the_review_queue_and_its_image_previews(trial):
    trial_dir, out = trial
    [row] = displays.review_queue(out["review"]).to_dict("records")
    assert (row["id"], row["status"], row["requirement"]) == ("v2", "pending_review", "an expert reads the log")
    assert row["evidence"] == "submission/results/log.txt, submission/results/fig.png"
    refs = ["submission/results/log.txt", "results/missing.png", "submission/results/fig.png"]
    images = displays.evidence_images(trial_dir, refs)
    assert images == [TrialPaths(trial_dir).evidence.resolve() / "submission/results/fig.png"]


def test_glue_records_a_summary_where_scrapbook_finds_it(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append((obj, kw)))
    displays.glue("score", {"R": 0.5, "where": Path("/t")})
    [(obj, kw)] = shown
    assert obj == {displays.SCRAP_MIME: {"name": "score", "data": {"R": 0.5, "where": "/t"}, "encoder": "json",
                                         "version": 1}}
    assert kw["metadata"] == {"scrapbook": {"name": "score", "data": True, "display": False}} and kw["raw"]


def test_a_kernel_the_workbench_started_is_told_apart(monkeypatch):
    monkeypatch.delenv("WORKBENCH_KERNEL_PARENT", raising=False)
    assert not displays.executed_by_workbench()
    monkeypatch.setenv("WORKBENCH_KERNEL_PARENT", str(os.getpid()))
    assert displays.executed_by_workbench()
