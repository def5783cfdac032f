"""SOTA-relative improvement g, its bands and SOTA text parsing (NatureBench)."""

import math

import pytest

from workbench.errors import ValidationProblem
from workbench.scoring.sota import band, improvement, summarize_instances
from workbench.task.sota_spec import SotaSpec, parse_sota


@pytest.mark.parametrize("g, expected", [
    (0.1, "match"), (0.1000001, "surpass"), (0.5, "surpass"), (0.0, "match"), (0.05, "match"),
    (-1e-12, "reproduce"), (-0.05, "reproduce"), (-0.0500001, "below"), (-1.0, "below"),
])
def test_bands_at_their_edges(g, expected):
    assert band(g) == expected


def test_g_higher_and_lower_is_better():
    assert improvement(105.0, 100.0, "higher_is_better") == pytest.approx(0.05)
    assert improvement(95.0, 100.0, "higher_is_better") == pytest.approx(-0.05)
    # lower is better: an error of 0.8 against a SOTA of 1.0 is a 20 % improvement
    assert improvement(0.8, 1.0, "lower_is_better") == pytest.approx(0.2)
    assert improvement(1.2, 1.0, "lower_is_better") == pytest.approx(-0.2)
    # a negative SOTA is normalised by its magnitude
    assert improvement(-0.9, -1.0, "higher_is_better") == pytest.approx(0.1)
    assert band(improvement(110.0, 100.0, "higher_is_better")) == "match"  # exactly 0.1 (floating point)
    assert band(improvement(110.0001, 100.0, "higher_is_better")) == "surpass"


@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), "n/a"])
def test_failure_floor(value):
    assert improvement(value, 0.9, "higher_is_better") == -1.0


def test_sota_of_zero_needs_a_normalizer():
    with pytest.raises(ValueError, match="normalizer"):
        improvement(0.1, 0.0, "lower_is_better")
    assert improvement(0.1, 0.0, "lower_is_better", normalizer=0.5) == pytest.approx(-0.2)
    with pytest.raises(ValueError, match="normalizer"):
        SotaSpec.model_validate({"instances": {"a": {"metric": "mae", "direction": "lower_is_better", "sota": "0.0"}}})
    SotaSpec.model_validate({"instances": {"a": {"metric": "mae", "direction": "lower_is_better", "sota": "0.0",
                                                  "normalizer": 1.0}}})


@pytest.mark.parametrize("text, direction, expected", [
    ("95.5 ± 0.2", "higher_is_better", 95.5),
    ("95.5 +/- 0.2", "higher_is_better", 95.5),
    ("0.912 (0.004)", "higher_is_better", 0.912),
    ("~0.8", "higher_is_better", 0.8),
    ("<0.3", "lower_is_better", 0.3),
    ("0.81-0.85", "higher_is_better", 0.85),
    ("0.81–0.85", "lower_is_better", 0.81),
    ("0.81 to 0.85", "lower_is_better", 0.81),
    ("0.81 / 0.84", "higher_is_better", 0.84),
    ("97.5%", "higher_is_better", 97.5),
    ("-1.2", "higher_is_better", -1.2),
    ("1.5e-3", "lower_is_better", 0.0015),
    (0.7, "higher_is_better", 0.7),
])
def test_parse_sota(text, direction, expected):
    assert parse_sota(text, direction) == pytest.approx(expected)


def test_parse_sota_without_a_number():
    with pytest.raises(ValueError, match="no number"):
        parse_sota("state of the art", "higher_is_better")
    with pytest.raises(ValueError):
        parse_sota("0.9", "sideways")


def test_task_g_is_the_mean_over_instances_with_failures_at_minus_one():
    spec = SotaSpec.model_validate({"instances": {
        "a": {"metric": "acc", "direction": "higher_is_better", "sota": "0.80"},
        "b": {"metric": "rmse", "direction": "lower_is_better", "sota": "2.0 ± 0.1"},
        "c": {"metric": "acc", "direction": "higher_is_better", "sota": "0.5"}}})
    block = summarize_instances(spec, {"a": {"acc": 0.88}, "b": {"rmse": 1.0},
                                       "c": {"acc": None, "error": "no predictions"}})
    gs = {n: i["g"] for n, i in block["instances"].items()}
    assert gs["a"] == pytest.approx(0.1) and gs["b"] == pytest.approx(0.5) and gs["c"] == -1.0
    assert block["g"] == pytest.approx((0.1 + 0.5 - 1.0) / 3)
    assert block["band"] == "below"
    assert block["instances"]["c"]["error"] == "no predictions"
    withheld = summarize_instances(spec, None, "the evaluator could not start", withheld=True)
    assert withheld["withheld"] and withheld["g"] is None and withheld["band"] is None
    rejected = summarize_instances(spec, None, "the evaluator ran out of time on the submission's outputs")
    assert rejected["g"] == -1.0 and rejected["band"] == "below"
    assert "ran out of time" in rejected["instances"]["a"]["error"]
    assert math.isclose(summarize_instances(spec, {})["g"], -1.0)


def test_spec_errors_name_the_file_and_field(tmp_path):
    from workbench.task.sota_spec import load_spec

    p = tmp_path / "sota.json"
    p.write_text('{"instances": {"a": {"metric": "acc", "direction": "up", "sota": "0.9"}}}')
    with pytest.raises(ValidationProblem) as exc:
        load_spec(p)
    assert str(p) in str(exc.value) and "direction" in str(exc.value)
