"""What the judge is shown of a leaf's evidence inputs (scoring/judge_evidence.py)."""

from __future__ import annotations

from tests.conftest import write_files
from workbench.evidence import Evidence, freeze
from workbench.rubric import parse_rubric
from workbench.scoring.judge.evidence import gather_evidence
from workbench.scoring.judge.settings import JudgeSettings

FILES = {"submission/results/a.csv": "x\n1\n", "submission/results/run1/raw.npy": "1",
         "submission/results/run1/log.txt": "ok", "submission/results/run2/raw.npy": "2"}


def _shown(tmp_path, **inp) -> tuple[str, dict[str, str]]:
    freeze(write_files(tmp_path / "stage", FILES), tmp_path / "ev")
    rubric = parse_rubric({"id": "r", "sub_tasks": [{"id": "L", "task_category": "Validation", "method": "judge",
                                                     "evidence_inputs": [{"path": "submission/results/", **inp}]}]})
    parts, hashes, missing = gather_evidence(Evidence(tmp_path / "ev"), rubric.leaves[0], JudgeSettings(model="m"))
    assert missing == []
    return "".join(p for p in parts if isinstance(p, str)), hashes


def test_a_recursive_directory_input_lists_every_file_below_it(tmp_path):
    text, hashes = _shown(tmp_path, recursive=True)
    assert "directory with 4 file(s)" in text
    assert all(f in text for f in FILES) and "folder of" not in text
    assert set(hashes) == set(FILES)


def test_a_plain_directory_input_lists_its_own_files_and_names_its_subfolders(tmp_path):
    """PaperBenchX's ``recursive`` (kept on every evidence input of its real rubrics) now means what it says."""
    text, hashes = _shown(tmp_path)
    assert "submission/results/a.csv  4 bytes" in text and "raw.npy  1 bytes" not in text
    assert "submission/results/run1/  folder of 2 file(s), not listed (list_dir)" in text
    assert "submission/results/run2/  folder of 1 file(s)" in text
    assert set(hashes) == set(FILES)  # the fingerprint still covers every file below: any change re-judges
