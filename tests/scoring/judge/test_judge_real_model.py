"""The judge against a real server and a real model (marker ``model``): the demo's judge leaves, judged by
Gemma 3 270M (a base model, text only). Asserted whatever it says: a reply under the JSON schema is a
valid verdict with the server's token counts, and free replies that stay invalid are re-asked, then
withheld as the judge's failure, never scored."""

from __future__ import annotations

import shutil

import pytest

from tests.model_server import MODEL_NAME
from workbench.scoring import score_trial
from workbench.scoring.judge.leaf import JudgeSettings

pytestmark = pytest.mark.model


@pytest.fixture
def oracle_trial(demo_batch, tmp_path):
    run, _ = demo_batch
    trial = next(p for p in (run / "trials").iterdir() if "oracle" in p.name)
    return shutil.copytree(trial, tmp_path / trial.name, symlinks=True)


def judge(url: str, **kw) -> JudgeSettings:
    return JudgeSettings(model=MODEL_NAME, base_url=url, api_key="none", images=False, excerpt_bytes=3000, **kw)


def test_the_demos_judge_leaves_get_valid_verdicts_under_the_json_schema(demo_task, oracle_trial, model_server):
    s = score_trial(demo_task, oracle_trial, judge=judge(model_server, max_tokens=200), force=True)
    judged = [lf for lf in s.leaves if lf.usage]
    assert {lf.id for lf in judged} == {"A5", "C9"}
    for lf in judged:
        assert lf.usage["response_format"] == "json_schema"
        assert lf.usage["prompt_tokens"] > 0 and lf.usage["completion_tokens"] > 0
        # a valid verdict (a binary leaf answers 0 or 1), or a bounded re-ask then withheld: never an endpoint fault
        assert (lf.status == "scored" and 0 <= lf.score <= 1) or "no valid verdict" in (lf.error or ""), lf
    assert s.judge_usage["prompt_tokens"] == sum(lf.usage["prompt_tokens"] for lf in judged)
    a5 = next(lf for lf in judged if lf.id == "A5")
    assert a5.status == "scored" and a5.score in (0.0, 1.0)  # measured: every reply valid under the schema


def test_free_json_replies_that_stay_invalid_are_reasked_then_withheld(demo_task, oracle_trial, model_server):
    s = score_trial(demo_task, oracle_trial, only_leaves={"A5"}, force=True,
                    judge=judge(model_server, json_schema=False, max_tokens=48, max_reask=1))
    a5 = next(lf for lf in s.leaves if lf.id == "A5")
    assert a5.usage["response_format"] == "free" and a5.usage["calls"] >= 1
    if a5.status == "withheld":  # measured: a base model rambles past 48 tokens without a schema
        assert a5.score is None and a5.error.startswith("no valid verdict after 2 replies")
        assert a5.usage["invalid_replies"] == 2 and s.needs_rescoring
    else:
        assert a5.status == "scored" and a5.score in (0.0, 1.0)
