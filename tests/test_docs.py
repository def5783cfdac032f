"""The documentation's examples run: docs/rubric.md's rubric parses, its worked R is what the finaliser
computes, and its check-API example is a working `@task_check`."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest

from tests.conftest import REPO
from tests.scoring.test_finalize import machine
from workbench.evidence import Evidence
from workbench.rubric import parse_rubric
from workbench.scoring.finalize import finalize

PAGE = (REPO / "docs" / "rubric.md").read_text()


def _block(lang: str) -> str:
    (code,) = re.findall(rf"```{lang}\n(.*?)```", PAGE, re.S)
    return code


@pytest.fixture(scope="module")
def rubric():
    return parse_rubric(json.loads(_block("json rubric")), "docs/rubric.md")


def test_the_rubric_example_has_each_leaf_kind_and_the_stated_weights(rubric):
    kinds = {lf.id: (lf.node.check or {}).get("kind", lf.node.method) for lf in rubric.leaves}
    assert kinds == {"G1": "written_by", "G2": "replay_succeeded", "M1": "task", "M2": "judge", "V1": "json_value"}
    weights = {lf.id: Fraction(lf.weight) if lf.weight else lf.effective_weight for lf in rubric.leaves}
    assert weights == {"G1": Fraction(1, 7), "G2": Fraction(1, 7), "M1": Fraction(1, 7), "M2": Fraction(1, 7),
                       "V1": Fraction(3, 7)}
    assert "R = 3/7 = 0.4286" in PAGE and "R_upper = 4/7 = 0.5714" in PAGE


def test_the_worked_r_is_what_the_finaliser_computes(rubric):
    stated = {"G1": ("scored", 1.0), "G2": ("scored", 1.0), "M1": ("scored", 1.0), "M2": ("pending_review", None),
              "V1": ("scored", 0.0)}
    _, f = finalize(machine(rubric, stated), [])
    assert f["exact"]["R"] == "3/7" and f["exact"]["R_upper"] == "4/7"
    final, f = finalize(machine(rubric, {**stated, "G2": ("scored", 0.0)}), [])
    assert f["R"] == 0 and {lf.id for lf in final if lf.status == "gated"} == {"G1", "M1", "M2", "V1"}


def test_the_check_api_example_is_a_working_task_check(tmp_path):
    ns: dict = {}
    exec(compile(_block("python"), "docs/rubric.md", "exec"), ns)  # noqa: S102 (our own documentation)
    check = ns["declared_method"]
    assert check.__workbench_check__ == "declared_method"
    (tmp_path / "submission/results").mkdir(parents=True)
    (tmp_path / "replay/input").mkdir(parents=True)
    (tmp_path / "submission/results/estimate.json").write_text('{"method": "monte-carlo", "n": 300000}')
    (tmp_path / "replay/input/inputs.json").write_text('{"seed": 1, "n": 300000}')
    out = check(Evidence(tmp_path))
    assert out.score == 1.0 and out.evidence_refs == ["submission/results/estimate.json"]
    (tmp_path / "replay/input/inputs.json").write_text('{"seed": 1, "n": 1000}')
    assert check(Evidence(tmp_path)).score == 0.0
