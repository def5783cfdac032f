"""The four stages as plain functions: called by hand they write the files the pipeline writes, and return
JSON-able summaries of what is on disk (what a stage notebook glues and trial.json records)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import config, write_task
from workbench.io import sha256_file, tree_hashes
from workbench.jupyter.notebooks import STAGES
from workbench.paths import TrialPaths
from workbench.scoring import Scores
from workbench.task import load_task
from workbench.trial import stages
from workbench.trial.pipeline import run_trial


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory):
    return str(write_task(tmp_path_factory.mktemp("stages") / "mini"))


@pytest.fixture(scope="module")
def by_hand(task_dir, tmp_path_factory):
    """The four stages called one after the other, as the stage notebooks call them: (trial dir, summaries)."""
    trial = str(tmp_path_factory.mktemp("by-hand") / "mini__oracle__1")
    out = {"session": stages.session(task_dir, trial, config("oracle").model_dump()),
           "replay": stages.replay(task_dir, trial),
           "score": stages.score(task_dir, trial),
           "review": stages.review(task_dir, trial)}
    return TrialPaths(Path(trial)), out


@pytest.fixture(scope="module")
def by_pipeline(task_dir, tmp_path_factory):
    run = tmp_path_factory.mktemp("pipeline")
    rec = run_trial(load_task(task_dir), config("oracle"), run, engine="inline")
    return TrialPaths(run / "trials" / rec.id), rec


def _files(tp: TrialPaths) -> set[str]:
    return {p.relative_to(tp.root).as_posix() for p in tp.root.rglob("*") if not p.is_dir()}


@pytest.mark.slow
def test_the_stages_by_hand_write_the_files_the_pipeline_writes(by_hand, by_pipeline):
    (hand, _), (pipe, _) = by_hand, by_pipeline
    assert _files(hand) == _files(pipe) - {"trial.json"}  # the record of the stages is the pipeline's own
    assert tree_hashes(hand.submission) == tree_hashes(pipe.submission)
    assert hand.manifest.read_text() == pipe.manifest.read_text()  # the same evidence, byte for byte
    a, b = (Scores.model_validate_json(tp.scores.read_text()) for tp in (hand, pipe))
    assert [(lf.id, lf.status, lf.score, lf.rationale) for lf in a.leaves] == \
           [(lf.id, lf.status, lf.score, lf.rationale) for lf in b.leaves]
    assert (a.R, a.phases, a.coverage) == (b.R, b.phases, b.coverage) and a.R == 0.75


def test_the_pipeline_runs_the_stages_in_order_and_records_their_outcome(by_hand, by_pipeline):
    (_, out), (_, rec) = by_hand, by_pipeline
    assert list(stages.RUNNERS) == list(STAGES) == ["session", "replay", "score", "review"]
    assert [rec.stages[s].status for s in STAGES] == ["done"] * 4
    assert (rec.outcome["delivery"], rec.outcome["replay"], rec.outcome["R"]) == \
           (out["session"]["status"], out["replay"]["status"], out["score"]["R"])


def test_each_summary_is_json_and_says_what_is_on_disk(by_hand):
    tp, out = by_hand
    assert json.loads(json.dumps(out)) == out  # what papermill's glue carries back unchanged
    assert out["session"] == json.loads(tp.delivery.read_text())
    prov = json.loads(tp.provenance.read_text())
    assert out["replay"] == {k: prov[k] for k in out["replay"]}
    assert out["replay"]["evidence_manifest_digest"] == sha256_file(tp.manifest)
    scores = Scores.model_validate_json(tp.scores.read_text())
    assert (out["score"]["R"], out["score"]["full"], out["score"]["final"]) == (scores.R, scores.full, scores.final)
    assert out["score"]["leaf_status"] == {"scored": 3, "pending_review": 1}
    assert out["score"]["fingerprint"] == scores.fingerprint["digest"]


def test_the_review_stage_queues_what_awaits_an_expert(by_hand):
    _, out = by_hand
    assert out["review"] == {"awaiting": 1, "awaiting_weight": 0.25, "queue": [
        {"id": "v2", "title": "an expert reads the log", "phase": "validation", "status": "pending_review",
         "method": "expert", "effective_weight": 0.25, "evidence_refs": ["submission/results/log.txt"]}]}
