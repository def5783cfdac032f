"""Withheld outcomes count nowhere; provisional ones carry their bounds (issue 15 item 7).

configs A, D; tasks t1 (field F1), t2 (field F2); one attempt:
  A t1  final, R 0.5                A t2  final, R 0.7
  D t1  needs rescoring (a leaf withheld): R 0.95 and full on paper -> withheld, counts nowhere
  D t2  provisional: R 0.80 with 0.2 weight awaiting review; the scorer's R_upper is 0.88 (a gate holds
        it below R + uncounted = 1.0), full_upper False; modeling and execution 0.9, validation 0.4
"""

import math
import re

import pandas as pd
import pytest

from tests.analysis.test_analysis_metrics import _trial
from workbench.analysis import frames, metrics
from workbench.analysis.report import banner, table2

STUDY = pd.DataFrame([
    _trial("A", "t1", 0.5, full=False, R_upper=0.5, full_upper=False),
    _trial("A", "t2", 0.7, full=False, R_upper=0.7, full_upper=False),
    _trial("D", "t1", 0.95, full=True, final=False, needs_rescoring=True, uncounted_weight=0.05, R_upper=1.0,
           full_upper=True, modeling_share=1.0, execution_share=1.0, validation_share=1.0),
    _trial("D", "t2", 0.80, full=False, final=False, uncounted_weight=0.2, R_upper=0.88, full_upper=False,
           modeling_share=0.9, execution_share=0.9, validation_share=0.4),
])


@pytest.fixture
def o():
    return frames.outcomes(STUDY)


def test_a_needs_rescoring_trial_is_withheld_not_scored(o):
    d1 = o.set_index(["config", "task"]).loc[("D", "t1")]
    assert d1.state == "needs_rescoring" and math.isnan(d1.score) and math.isnan(d1.R_upper)
    assert d1.is_full is pd.NA and math.isnan(d1.modeling_share)


def test_withheld_r_does_not_enter_partial_or_full_rate(o):
    d = metrics.model_table(o).set_index("config").loc["D"]
    assert d.partial == pytest.approx(80.0)  # not (95 + 80) / 2
    assert d.full_rate == 0.0 and d.full_rate_upper == 0.0  # R 0.95 withheld: not a full reproduction
    assert (d.outcomes, d.withheld, d.needs_rescoring, d.infra_error, d.provisional) == (2, 1, 1, 0, 1)


def test_provisional_bounds_come_from_the_scorer(o):
    d = metrics.model_table(o).set_index("config").loc["D"]
    assert d.partial_upper == pytest.approx(88.0)  # the scorer's exact R_upper, not R + uncounted = 100


def test_older_rows_without_bounds_fall_back_to_r_plus_uncounted():
    old = STUDY.assign(R_upper=None, full_upper=None)
    t = metrics.model_table(frames.outcomes(old)).set_index("config").loc["D"]
    assert t.partial_upper == pytest.approx(100.0) and t.full_rate_upper == pytest.approx(100.0)
    assert t.partial == pytest.approx(80.0) and t.full_rate == 0.0


def test_full_is_the_scorers_boolean_not_a_float_comparison():
    # exact aggregation says R = 9/10 (not full); the stored float carries rounding noise above 0.9
    t = pd.DataFrame([_trial("A", "t1", 0.9 + 1e-12, full=False, R_upper=0.9 + 1e-12, full_upper=False)])
    o = frames.outcomes(t)
    assert not o.is_full.iloc[0] and metrics.model_table(o).full_rate.iloc[0] == 0.0


def test_withheld_outcomes_enter_no_other_table(o):
    d = metrics.domain_view(o)
    assert math.isnan(d["heatmap"].loc["D", "F1"]) and d["difficulty"]["F1"] == pytest.approx(50.0)
    dist = metrics.phase_share_distributions(o).set_index("phase")
    assert dist.loc["modeling", "n"] == 3 and dist.loc["modeling", "mean"] == pytest.approx((50 + 70 + 90) / 3)
    s = metrics.solved_by_any(o)
    assert (s["outcomes"], s["full_outcomes"], s["tasks_solved"]) == (3, 0, 0)
    g = metrics.composition_gap(o)
    assert (g["high"], g["full"], g["not_full"]) == (1, 0, 1) and g["not_full_mean_validation"] == pytest.approx(40)


def test_withheld_outcomes_are_listed_with_their_reason():
    crash = _trial("C", "t1", None, status="infra_error", error="sandbox died")
    t = pd.concat([STUDY, pd.DataFrame([crash])], ignore_index=True)
    w = metrics.withheld(frames.outcomes(t))  # C t2 is missing (counts 0), not withheld
    assert w[["config", "task", "trial"]].values.tolist() == [["C", "t1", "t1__C__1"], ["D", "t1", "t1__D__1"]]
    assert w.reason.iloc[0] == "infrastructure error: sandbox died" and w.reason.iloc[1].startswith("needs rescoring")


def test_a_withheld_sota_result_is_withheld_not_below():
    t = pd.DataFrame([
        _trial("A", "t1", 1.0, scoring="sota", sota_g=0.2, sota_band="surpass"),
        _trial("A", "t2", 0.0, scoring="sota", sota_g=None, sota_band=None, needs_rescoring=True, final=False),
        _trial("B", "t2", 0.0, scoring="sota", sota_g=-1.0, sota_band="below"),  # no valid result: counts
        # B t1 missing: counts g = -1
    ])
    s = metrics.sota_summary(frames.outcomes(t)).set_index("config")
    assert s.loc["A", "mean_g"] == pytest.approx(0.2) and s.loc["A", "surpass_rate"] == 100.0  # not -0.4, 50 %
    assert (s.loc["A", "outcomes"], s.loc["A", "withheld"]) == (1, 1)
    assert s.loc["B", "mean_g"] == -1.0 and s.loc["B", "reproduce_rate"] == 0.0
    assert (s.loc["B", "outcomes"], s.loc["B", "withheld"]) == (2, 0)


def test_a_refused_sota_outcome_is_below_whatever_was_stored():
    t = pd.DataFrame([_trial("A", "t1", 0.0, scoring="sota", refused=True, sota_g=0.3, sota_band="surpass")])
    s = metrics.sota_summary(frames.outcomes(t)).iloc[0]
    assert s.mean_g == -1.0 and s.surpass_rate == 0.0


def test_a_withheld_qa_outcome_is_not_averaged():
    t = pd.DataFrame([
        _trial("A", "t1", 1.0, scoring="qa", qa_oeq=4.0, qa_mcq_accuracy=1.0),
        _trial("A", "t2", 0.2, scoring="qa", qa_oeq=1.0, qa_mcq_accuracy=0.0, needs_rescoring=True, final=False),
    ])
    q = metrics.qa_summary(frames.outcomes(t)).iloc[0]
    assert (q.oeq_mean, q.mcq_accuracy, q.outcomes, q.withheld) == (4.0, 100.0, 1, 1)


def _cells(html: str) -> list[str]:
    return [c.strip() for c in re.findall(r"<td>(.*?)</td>", html, flags=re.S)]


def test_table2_prints_bounds_where_outcomes_await_review(o):
    rows = {r[0]: r for r in (_cells(tr) for tr in re.findall(r"<tr>(.*?)</tr>", table2(metrics.model_table(o)),
                                                               flags=re.S)) if r}
    # partial, its interval over tasks (– below three tasks), full rate, its interval
    assert [rows["D"][i] for i in (1, 3)] == ["80.00 [80.00, 88.00]", "0.00 [0.00, 0.00]"]
    assert [rows["A"][i] for i in (1, 3)] == ["60.00", "0.00"]  # nothing awaiting review: one number each
    assert rows["D"][-1] == "1" and rows["A"][-1] == "0"  # withheld


def test_the_banner_counts_and_lists_withheld_outcomes(tmp_path):
    (tmp_path / "r" / "trials").mkdir(parents=True)
    crash = _trial("C", "t1", None, status="infra_error", error="<b>sandbox</b> died")
    o = frames.outcomes(pd.concat([STUDY, pd.DataFrame([crash])], ignore_index=True))
    b = banner(tmp_path / "r", o)
    assert "2 outcome(s) withheld" in b and "1 by infrastructure errors" in b and "1 needing rescoring" in b
    assert "By configuration: C 1, D 1." in b and "1 outcome(s) still await review" in b
    withheld = b[b.index("the withheld outcomes"):]  # after the table of the runs merged
    listed = [r for r in (_cells(tr) for tr in re.findall(r"<tr>(.*?)</tr>", withheld, flags=re.S)) if r]
    assert [r[:4] for r in listed] == [["C", "t1", "1", "r"], ["D", "t1", "1", "r"]]
    assert listed[0][4] == "t1__C__1" and "&lt;b&gt;sandbox&lt;/b&gt; died" in listed[0][5]  # escaped


def test_the_banner_lists_a_bounded_number_of_withheld_outcomes(tmp_path):
    from workbench.analysis.report import WITHHELD_LISTED

    (tmp_path / "r" / "trials").mkdir(parents=True)
    crashes = [_trial("C", "t1", None, status="infra_error", attempt=i, trial_id=f"t1__C__{i}", error="died")
               for i in range(1, WITHHELD_LISTED + 51)]
    o = frames.outcomes(pd.concat([STUDY, pd.DataFrame(crashes)], ignore_index=True))
    b = banner(tmp_path / "r", o)
    assert f"{WITHHELD_LISTED + 51} outcome(s) withheld" in b  # the count is every one of them ...
    listed = b[b.index("the withheld outcomes"):].count("infrastructure error: died")
    assert listed == WITHHELD_LISTED and f"the first {WITHHELD_LISTED} of {WITHHELD_LISTED + 51}" in b  # not the list
