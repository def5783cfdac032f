"""One wording for every registry's refusal, from one helper."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO
from workbench.errors import WorkbenchError, lookup, unknown


def test_a_name_no_registry_knows_is_one_line_listing_the_known_ones():
    assert lookup({"a": 1, "b": 2}, "thing", "b") == 2
    with pytest.raises(WorkbenchError, match=r"^unknown thing 'c'; known: a, b$"):
        lookup({"b": 2, "a": 1}, "thing", "c")
    with pytest.raises(ValueError, match="unknown agent 'gpt'; known: x"):
        lookup({"x": 1}, "agent", "gpt", ValueError)
    assert unknown("kind", "k", ["z", "y"]) == "unknown kind 'k'; known: y, z"


def test_every_registry_words_its_refusal_through_the_helper():
    """No module spells "; known:" itself: each name -> class registry goes through errors.lookup/unknown."""
    own = [f"{p.relative_to(REPO)}:{n}" for p in (REPO / "workbench").rglob("*.py") if p.name != "errors.py"
           for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"[;(] ?known: ", line)]
    assert own == []


@pytest.mark.parametrize(("call", "message"), [
    ("from workbench.sandbox import get_sandbox; get_sandbox('dokcer')", "unknown sandbox 'dokcer'; known: bwrap"),
    ("from workbench.agents import get_agent; get_agent('gpt')", "unknown agent 'gpt'; known: "),
    ("from workbench.batch.executors import get_executor; get_executor('pbs', 1)",
     "unknown executor 'pbs'; known: dask"),
    ("from workbench.scoring.modes import mode_of; mode_of('vibes')", "unknown scoring mode 'vibes'; known: "),
    ("from workbench.trial.pipeline import get_engine; get_engine('spark')", "unknown engine 'spark'; known: inline"),
])
def test_each_registry_refuses_in_the_one_wording(call, message):
    with pytest.raises(WorkbenchError) as err:
        exec(call)  # noqa: S102 - a fixed line of this test
    assert str(err.value).startswith(message)
