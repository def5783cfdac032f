"""Each metric against values computed by hand on a small study.

configs A, B, C; tasks t1 (field F1), t2 (field F2); one attempt:
  A t1  final, R = 0.90 exactly (not full), phases 0.9/0.9/0.9, 10 turns
  A t2  final, R = 0.95 (full), phases 1/1/0.85, 30 turns
  B t1  refused, no fallback, R 0.3 on paper -> counts 0, 2 turns
  B t2  missing (never ran) -> counts 0
  C t1  infra_error -> withheld
  C t2  refused but the fallback A delivered; provisional R 0.5 with 0.2 weight awaiting review, 50 turns
"""

import math

import numpy as np
import pandas as pd
import pytest

from workbench.analysis import frames, metrics


def _trial(config, task, R, **kw):
    field = {"t1": "F1", "t2": "F2"}[task]
    row = {"run": "r", "trial_id": f"{task}__{config}__1", "task": task, "field": field, "domain": "d",
           "scoring": "rubric", "config": config, "agent": "x", "model": config, "attempt": 1, "status": "complete",
           "refused": False, "fallback_used": None, "R": R, "final": True, "uncounted_weight": 0.0,
           "modeling_share": R, "execution_share": R, "validation_share": R, "turns": 1, "agent_seconds": 3600.0,
           "input_tokens": 1000, "output_tokens": 100, "agent_cost_usd": 1.0, "finished_at": "2026-11-01",
           "sota_g": None, "sota_band": None, "qa_oeq": None, "qa_mcq_accuracy": None}
    return {**row, **kw}


TRIALS = pd.DataFrame([
    _trial("A", "t1", 0.90, modeling_share=0.9, execution_share=0.9, validation_share=0.9, turns=10),
    _trial("A", "t2", 0.95, modeling_share=1.0, execution_share=1.0, validation_share=0.85, turns=30),
    _trial("B", "t1", 0.30, refused=True, turns=2),
    _trial("C", "t1", None, status="infra_error", turns=None, agent_seconds=None),
    _trial("C", "t2", 0.50, refused=True, fallback_used="A", final=False, uncounted_weight=0.2,
           modeling_share=0.6, execution_share=0.5, validation_share=0.4, turns=50),
])


@pytest.fixture
def o():
    return frames.outcomes(TRIALS)


def test_outcome_states_and_what_they_count(o):
    s = o.set_index(["config", "task"])
    assert s.loc[("A", "t1"), "state"] == "final" and not s.loc[("A", "t1"), "is_full"]  # 0.9 is not full
    assert s.loc[("A", "t2"), "is_full"]
    assert s.loc[("B", "t1"), ["state", "score"]].tolist() == ["refused", 0.0]
    assert s.loc[("B", "t2"), ["state", "score"]].tolist() == ["missing", 0.0]
    assert s.loc[("B", "t2"), "field"] == "F2"  # known from the other configurations
    assert s.loc[("C", "t1"), "state"] == "infra_error" and math.isnan(s.loc[("C", "t1"), "score"])
    assert s.loc[("C", "t2"), "state"] == "provisional" and s.loc[("C", "t2"), "R_upper"] == pytest.approx(0.7)
    assert len(o) == 6


def test_model_table(o):
    t = metrics.model_table(o).set_index("config")
    assert t.loc["A", "partial"] == pytest.approx(92.5) and t.loc["A", "full_rate"] == pytest.approx(50.0)
    assert t.loc["B", "partial"] == 0.0 and t.loc["B", "refusal_rate"] == 100.0 and t.loc["B", "missing"] == 1
    assert t.loc["C", "partial"] == pytest.approx(50.0) and t.loc["C", "partial_upper"] == pytest.approx(70.0)
    assert t.loc["C", "infra_error"] == 1 and t.loc["C", "provisional"] == 1
    assert t.loc["C", "refusal_rate"] == 100.0  # refused, even though the fallback scored
    assert t.loc["A", "modeling_share"] == pytest.approx(95.0) and t.loc["A", "validation_share"] == pytest.approx(87.5)
    assert t.loc["A", "turns"] == 20 and t.loc["A", "hours"] == 1.0 and t.loc["A", "tokens"] == 1100
    assert list(t.index) == ["A", "C", "B"]  # by partial score


def test_domain_view(o):
    d = metrics.domain_view(o)
    assert d["heatmap"].loc["A", "F1"] == pytest.approx(90) and d["heatmap"].loc["B", "F2"] == 0
    assert math.isnan(d["heatmap"].loc["C", "F1"])
    assert d["difficulty"]["F1"] == pytest.approx(55.0) and d["difficulty"]["F2"] == pytest.approx(100 - 145 / 3)
    assert list(d["heatmap"].columns) == ["F1", "F2"]  # hardest first
    assert d["best"] == {"F1": ["A"], "F2": ["A"]}


def test_phase_distributions(o):
    m = metrics.phase_share_distributions(o).set_index("phase").loc["modeling"]
    # counted outcomes: A t1 90, A t2 100, B t1 0, B t2 0, C t2 60
    assert m.n == 5 and m["mean"] == pytest.approx(50) and m["median"] == 60
    assert m.q25 == 0 and m.q75 == 90 and m.p90 == pytest.approx(96)


def test_turns_vs_score_and_trimmed_mean(o):
    tv = metrics.turns_vs_score(o)
    pts = tv["points"].set_index("config")
    assert pts.turns_trimmed.to_dict() == {"A": 20.0, "B": 2.0, "C": 50.0}
    x, y = np.array([20, 2, 50.0]), np.array([92.5, 0, 50.0])
    r = ((x - x.mean()) * (y - y.mean())).sum() / math.sqrt(((x - x.mean()) ** 2).sum() * ((y - y.mean()) ** 2).sum())
    assert tv["r"] == pytest.approx(r)
    assert metrics.trimmed_mean(range(1, 11)) == pytest.approx(5.5)  # drops 1 and 10
    assert metrics.trimmed_mean([1, 100]) == pytest.approx(50.5)


def test_solved_by_any_and_composition_gap(o):
    s = metrics.solved_by_any(o)
    assert (s["full_outcomes"], s["tasks_solved"], s["tasks_unsolved"]) == (1, 1, 1)
    assert s["tasks_solved_by_at_most_two"] == 1
    assert s["per_task"].loc["t2", "configs_solving"] == 1
    g = metrics.composition_gap(o)
    assert (g["high"], g["full"], g["not_full"]) == (2, 1, 1)  # A t1 (R exactly 0.9) is the gap
    assert g["not_full_mean_validation"] == pytest.approx(90.0)


def test_time_allocation_means_per_trajectory_shares(o):
    wf = pd.DataFrame([{"run": "r", "trial_id": "t1__A__1", "activity": "paper_reconstruction", "seconds": 10.0},
                       {"run": "r", "trial_id": "t1__A__1", "activity": "native_execution", "seconds": 30.0},
                       {"run": "r", "trial_id": "t2__A__1", "activity": "native_execution", "seconds": 10.0}])
    a = metrics.time_allocation(o, wf).set_index("config").loc["A"]
    assert a.trajectories == 2 and a["paper reconstruction"] == pytest.approx(12.5)
    assert a["native execution"] == pytest.approx(87.5) and a["implementation"] == 0


def test_sota_and_qa_summaries():
    t = pd.DataFrame([
        _trial("A", "t1", 1.0, scoring="sota", sota_g=0.2, sota_band="surpass"),
        _trial("A", "t2", 1.0, scoring="sota", sota_g=0.1, sota_band="match"),  # g = 0.1 is a match
        _trial("B", "t1", 0.0, scoring="sota", sota_g=None, sota_band=None),  # failed run: g = -1
        _trial("B", "t2", 1.0, scoring="sota", sota_g=-0.02, sota_band="reproduce"),
    ])
    s = metrics.sota_summary(frames.outcomes(t)).set_index("config")
    assert s.loc["A", ["surpass_rate", "match_rate", "at_least_match_rate"]].tolist() == [50, 50, 100]
    assert s.loc["B", "mean_g"] == pytest.approx(-0.51) and s.loc["B", "at_least_match_rate"] == 0
    q = pd.DataFrame([_trial("A", "t1", 1.0, scoring="qa", qa_oeq=4.0, qa_mcq_accuracy=0.5),
                      _trial("A", "t2", 1.0, scoring="qa", qa_oeq=2.0, qa_mcq_accuracy=1.0)])
    qs = metrics.qa_summary(frames.outcomes(q)).set_index("config").loc["A"]
    assert qs.oeq_mean == 3.0 and qs.mcq_accuracy == 75.0


def test_time_per_stage_is_the_median_of_each_part_over_the_trials_that_recorded_it():
    stages = ("session_seconds", "replay_seconds", "score_seconds", "review_seconds")
    split = ("score_checks_seconds", "score_judge_seconds", "score_other_seconds", "judge_calls")

    def scored(task, times, parts):
        return _trial("A", task, 0.5, **dict(zip(stages, times, strict=True)), **dict(zip(split, parts, strict=True)))

    timed = frames.outcomes(pd.DataFrame([
        scored("t1", (100.0, 10.0, 15.0, 1.0), (1.0, 10.0, 0.2, 2)),
        scored("t2", (300.0, 30.0, 35.0, 2.0), (2.0, 30.0, 0.4, 4)),
        _trial("B", "t1", 0.3, refused=True),  # scored before timings were kept; B t2 never ran
        # withheld, but its session and replay took time
        _trial("C", "t1", None, status="infra_error", session_seconds=50.0, replay_seconds=5.0),
    ]))
    t = metrics.time_per_stage(timed).set_index("config")
    assert t.loc["A"].tolist() == [2, 200.0, 20.0, 25.0, 1.5, 20.0, pytest.approx(0.3), 1.5, 3.0]
    assert t.loc["B", "trials"] == 1 and t.loc["B"].drop("trials").isna().all()  # not recorded is not 0
    assert t.loc["C", ["trials", "session", "replay"]].tolist() == [1, 50.0, 5.0] and np.isnan(t.loc["C", "scoring"])
    assert list(t.columns) == ["trials", "session", "replay", "scoring", "checks", "judge", "other", "review",
                               "judge calls"]
