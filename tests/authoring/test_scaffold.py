"""`workbench task new`: the scaffold passes `task check` as written, fails `task validate` with a reason per
line, and validates once its TODO(author) marks hold a real computation."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli
from workbench.authoring.check import check_task
from workbench.authoring.scaffold import new_task
from workbench.authoring.validate import validate_task
from workbench.errors import WorkbenchError
from workbench.task import load_task

pytestmark = pytest.mark.slow

# the tiny real computation an author puts at the marks: the fraction of seeded random points of the unit
# square inside the quarter circle, times 4
BODY = """    import random

    rng = random.Random(seed)
    inside = 0
    for _ in range(n):
        x, y = rng.random(), rng.random()
        inside += x * x + y * y < 1
    return 4 * inside / n
"""


def _fill(path, todo: str) -> None:
    text = path.read_text()
    line = f'    raise NotImplementedError("TODO(author): {todo}")\n'
    assert line in text, path
    path.write_text(text.replace(line, BODY))


@pytest.mark.parametrize("mode", ["rubric"])  # sota and qa share its science and fail the same way (measured)
def test_the_untouched_scaffold_checks_and_fails_validation_saying_why(tmp_path, mode):
    root = tmp_path / "pi"
    proc = run_cli("task", "new", str(root), "--name", "demo/pi", "--mode", mode)
    assert proc.returncode == 0 and "read " in proc.stdout and "README.md" in proc.stdout, proc.stderr
    assert check_task(root).ok, check_task(root).errors
    assert load_task(root).config.task.name == "demo/pi" and load_task(root).scoring == mode
    rec = validate_task(load_task(root), write=False)
    failed = {c.name: c.detail for c in rec.checks if not c.passed}
    assert "oracle R > 0.9" in failed and "the replay failed: reproduce.sh exited with code 1" in failed[
        "oracle R > 0.9"], failed
    assert "invalid < partial < oracle" in failed
    assert all("\n      " in d for n, d in failed.items() if n != "reference replays with secret inputs succeed")
    again = run_cli("task", "new", str(root))
    assert again.returncode != 0 and "exists and is not an empty directory; nothing was written" in again.stderr


@pytest.mark.parametrize("mode", ["rubric", "sota", "qa"])
def test_the_scaffold_filled_in_with_a_real_computation_validates(tmp_path, mode):
    root = tmp_path / "pi"
    new_task(root, mode, "demo/pi")
    _fill(root / "solution/src/estimate.py", "the reference computation")
    _fill(root / "calibration/partial/src/estimate.py", "the partial computation")
    _fill(root / "tests/recompute.py", "the scorer's computation")
    rec = validate_task(load_task(root), write=True)
    assert rec.passed, [f"{c.name}: {c.detail}" for c in rec.checks if not c.passed]
    runs = rec.runs
    assert runs["oracle-1"]["R"] > 0.9 and runs["oracle-1"]["secret_replay"] == "succeeded"
    assert 0 < runs["calibration/partial"]["R"] < runs["oracle-1"]["R"]
    assert all(runs[f"calibration/{c}"]["R_upper"] < 0.3
               for c in ("invalid", "cheat-typed", "cheat-cache-in-code", "cheat-shipped"))
    assert (root / "tests/validation.json").is_file() and check_task(root).ok


def test_a_mode_without_a_scaffold_is_one_line(tmp_path):
    with pytest.raises(WorkbenchError,
                       match="no scaffold for mode 'eureka' yet; there is: discovery, qa, rubric, sota"):
        new_task(tmp_path / "x", "eureka")
    assert not (tmp_path / "x").exists()


def _fill_with(path, todo: str, body: str) -> None:
    text = path.read_text()
    line = f'    raise NotImplementedError("TODO(author): {todo}")\n'
    assert line in text, path
    path.write_text(text.replace(line, body))


def test_the_discovery_scaffold_fails_validation_saying_why_then_validates_once_filled_in(tmp_path):
    """The discovery scaffold stands alone (a construction and a hidden evaluator): untouched, validation
    fails on the reference, the initial code and the evaluator, each line saying why; with a reference and a
    metric filled in it validates, every cheat invalid or worse than the initial code."""
    root = tmp_path / "spread"
    proc = run_cli("task", "new", str(root), "--name", "demo/spread", "--mode", "discovery")
    assert proc.returncode == 0, proc.stderr
    assert check_task(root).ok, check_task(root).errors
    assert not (root / "calibration" / "partial").exists() and (root / "tests" / "discovery.json").is_file()
    rec = validate_task(load_task(root), write=False)
    failed = {c.name: c.detail for c in rec.checks if not c.passed}
    assert "reference valid and within 0.001 of the published 0.707107" in failed
    assert "reproduce.sh exited with code 1" in failed["reference valid and within 0.001 of the published 0.707107"]
    assert "NotImplementedError" in failed["the evaluator ran on every submission"]
    _fill_with(root / "solution/src/construction.py", "the reference construction",
               "    return [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]]\n")
    _fill_with(root / "tests/evaluator.py", "the evaluator's metric",
               "    return min(math.dist(p, q) for i, p in enumerate(points) for q in points[i + 1:])\n")
    rec = validate_task(load_task(root), write=True)
    assert rec.passed, [f"{c.name}: {c.detail}" for c in rec.checks if not c.passed]
    assert rec.runs["oracle-1"]["metric"] == pytest.approx(0.7071067811865476) and rec.runs["oracle-1"]["R"] == 1
    assert rec.runs["initial"]["metric"] == 0.5 and rec.runs["initial"]["R"] == 0
    cheats = {n: r for n, r in rec.runs.items() if "cheat" in n}
    assert len(cheats) == 3 and all(r["R"] == 0 for r in cheats.values())
    assert rec.runs["calibration/cheat-claims"]["metric"] == 0  # its claimed 0.75 is never read
