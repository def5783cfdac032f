"""Faults: a full disk during writes. (SIGKILL in every stage: test_batch.py; judge outages:
scoring/test_judge.py.) Every outcome is complete or cleanly re-runnable; nothing half-written is read."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MATRIX, required_tool_missing, write_task
from workbench.batch.run import run_batch
from workbench.errors import WorkbenchError
from workbench.scoring import score_trial
from workbench.task import load_task

pytestmark = pytest.mark.slow


@pytest.fixture
def small_disk(tmp_path):
    """A real 24 MB filesystem (tmpfs) that tests can fill."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m,mode=0755", "tmpfs", str(mnt)]).returncode != 0:
        required_tool_missing("mounting a tmpfs (needs root)")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)])


def fill(disk: Path, leave: int = 0) -> Path:
    """Fill the filesystem to the last byte, then give back ``leave`` bytes; returns the filler file."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:  # unbuffered, so nothing is left over for a close to fail on
        for size in (1 << 16, 512, 1):  # then the last partial blocks
            try:
                while os.write(fd, b"\0" * size) == size:
                    pass
            except OSError:
                pass
    finally:
        os.close(fd)
    if leave:
        with open(filler, "r+b") as fh:
            fh.truncate(max(0, filler.stat().st_size - leave))
    return filler


def no_temp_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name.endswith((".tmp", ".partial"))]


def test_a_full_disk_while_scoring_keeps_the_previous_result_and_leaves_nothing_half_written(small_disk):
    task_root = write_task(small_disk / "mini")
    matrix = small_disk / "matrix.toml"
    matrix.write_text(MATRIX.format(task=task_root, attempts=1))
    run = small_disk / "run"
    run_batch(matrix, run, workers=1, engine="inline", progress=False)
    trial = run / "trials" / "mini__oracle__1"
    before = (trial / "scores.json").read_bytes()

    filler = fill(small_disk)
    with pytest.raises(OSError) as exc:
        score_trial(load_task(task_root), trial)
    assert exc.value.errno == 28  # ENOSPC, raised to the caller, never swallowed
    assert (trial / "scores.json").read_bytes() == before  # the previous result is intact ...
    json.loads(before)
    assert no_temp_files(run) == []  # ... and no partial file is left for a reader to pick up

    filler.unlink()
    assert score_trial(load_task(task_root), trial).R == pytest.approx(0.75)


def test_a_batch_on_a_full_disk_resumes_cleanly_once_space_is_back(small_disk):
    task_root = write_task(small_disk / "mini")
    matrix = small_disk / "matrix.toml"
    matrix.write_text(MATRIX.format(task=task_root, attempts=1))
    run = small_disk / "run"
    filler = fill(small_disk, leave=48 * 1024)  # room for the run's first files, not for a whole trial
    try:
        failed = run_batch(matrix, run, workers=1, engine="inline", progress=False).counts
    except (OSError, WorkbenchError) as exc:  # the batch may stop outright: that is a clean failure too
        failed = {"error": str(exc)}
    assert failed.get("complete", 0) < 2, failed
    filler.unlink()
    assert no_temp_files(run) == []
    # re-run: resume what was started (infra errors included), or start again if nothing was recorded
    run_batch(matrix, run, workers=1, engine="inline", progress=False, resume=(run / "run.json").is_file(),
              rerun_status=("infra_error",))
    recs = {p.name: json.loads((p / "trial.json").read_text()) for p in (run / "trials").iterdir()}
    assert set(recs) == {"mini__oracle__1", "mini__nop__1"}
    assert all(r["status"] == "complete" for r in recs.values()), {k: r["status"] for k, r in recs.items()}
    assert recs["mini__oracle__1"]["outcome"]["R"] == pytest.approx(0.75)
