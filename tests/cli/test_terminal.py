"""The CLI's text tables: `run --leaves` and `score --leaves`, with text the submission wrote kept on one line."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import MINI_RUBRIC, run_cli, write_task
from workbench.cli.terminal import one_line

# a task check that quotes the submission's own note in its rationale, as checks often quote outputs
QUOTING_CHECK = """from workbench.scoring import task_check

@task_check
def quote(ev):
    return 0.0, "the submission says: " + ev.read_text("results/note.txt")
"""
NOTE = r"printf '\033[2J\033]0;pwned\007line one\nline two\r\n\tline three' > results/note.txt"


def _quoting_task(tmp_path):
    rubric = copy.deepcopy(MINI_RUBRIC)
    rubric["sub_tasks"][0]["sub_tasks"][0]["check"] = {"kind": "task", "name": "quote"}
    root = write_task(tmp_path / "t", rubric=rubric, checks_py=QUOTING_CHECK)
    with (root / "solution" / "reproduce.sh").open("a") as f:
        f.write(NOTE + "\n")
    return root


def _table(stdout: str) -> dict[str, str]:
    """leaf id -> its row in the leaf table (the lines after the `id  phase ...` header)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["id", "phase"])
    rows = {}
    for line in lines[start + 1:]:
        if not line.strip():
            break
        rows[line.split()[0]] = line
    return rows


@pytest.mark.slow
def test_run_and_score_print_every_leaf_on_one_clean_line(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    root = _quoting_task(tmp_path)
    proc = run_cli("run", str(root), "--agent", "oracle", "--out", str(tmp_path / "run"), "--engine", "inline",
                   "--leaves")
    assert proc.returncode == 0, proc.stderr
    trial = tmp_path / "run" / "trials" / "t__oracle__1"
    leaves = json.loads((trial / "scores.json").read_text())["leaves"]
    rows = _table(proc.stdout)
    assert list(rows) == ["m1", "e1", "v1", "v2"]  # every leaf, by phase
    for lf in leaves:
        assert rows[lf["id"]].split()[1:3] == [lf["phase"], lf["status"]]
    assert rows["v2"].split()[3] == "-" and "awaits an expert" in rows["v2"]  # pending: no score yet
    assert rows["m1"].endswith("0  the submission says: line one line two line three")
    assert "\x1b" not in proc.stdout and "pwned" not in proc.stdout and "\r" not in proc.stdout
    assert max(len(row) for row in rows.values()) <= 100

    proc = run_cli("score", str(root), "--trial", str(trial), "--leaves")
    assert proc.returncode == 0, proc.stderr
    assert _table(proc.stdout) == rows
    assert "id" not in run_cli("score", str(root), "--trial", str(trial)).stdout.split()  # only when asked


@pytest.mark.slow
def test_a_long_rationale_is_cut_to_the_terminal_width(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    root = _quoting_task(tmp_path)
    with (root / "solution" / "reproduce.sh").open("a") as f:
        f.write("printf '%0300d' 0 >> results/note.txt\n")
    proc = run_cli("run", str(root), "--agent", "oracle", "--out", str(tmp_path / "run"), "--engine", "inline",
                   "--leaves")
    row = _table(proc.stdout)["m1"]
    assert len(row) == 60 and row.endswith("the submission says:…")


@pytest.mark.parametrize(("text", "clean"), [
    ("a\x1b[2Jb", "ab"),  # clear screen
    ("\x1b[1;31mred\x1b[0m", "red"),  # colour
    ("\x1b]0;title\x07x", "x"),  # set the window title
    ("one\n\ntwo\r\nthree\tfour", "one two three four"),
    ("left\u202eright\x00\x9b2J", "left right 2J"),  # bidi override, NUL, an 8-bit CSI: gone, not obeyed
])
def test_one_line_removes_what_would_rewrite_the_terminal(text, clean):
    assert one_line(text) == clean


def test_one_line_cuts_long_text_with_an_ellipsis():
    assert one_line("abcdefghij", 5) == "abcd…" and one_line("abc", 5) == "abc"
