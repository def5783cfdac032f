"""Clean replay: what is wiped, what fails, what is frozen."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import write_task
from workbench.errors import WorkbenchError
from workbench.evidence import verify
from workbench.replay.provenance import Provenance
from workbench.replay.trial import replay_trial
from workbench.scoring import score_trial
from workbench.task import load_task

GOOD = 'mkdir -p results\necho \'{"value": 42}\' > results/value.json\necho ok > results/log.txt\n'


@pytest.mark.slow
def test_cached_outputs_in_the_submission_do_not_count(mini_task, submission, tmp_path):
    # ships a perfect result but its reproduce.sh regenerates nothing
    sub = submission({"reproduce.sh": "echo 'trust me'\n", "results/value.json": '{"value": 42}',
                      "results/log.txt": "cached"})
    prov = replay_trial(mini_task, sub, tmp_path / "trial")
    assert prov.removed_outputs == {"results": 2}
    assert not (tmp_path / "trial/evidence/submission/results/value.json").exists()
    scores = score_trial(mini_task, tmp_path / "trial")
    by_id = {lf.id: lf for lf in scores.leaves}
    assert by_id["v1"].status == "missing_evidence" and by_id["v1"].score == 0
    assert by_id["m1"].score == 0
    assert scores.R == pytest.approx(0.25)  # only "replay succeeded" holds
    assert (sub / "results/value.json").exists()  # the delivered package itself is untouched


@pytest.mark.slow
def test_a_replay_that_edits_its_sources_fails_and_names_them(mini_task, submission, tmp_path):
    sub = submission({"reproduce.sh": GOOD + "echo '# patched' >> src/model.py\nrm -f src/extra.py\n",
                      "src/model.py": "x = 1\n", "src/extra.py": "y = 2\n"})
    prov = replay_trial(mini_task, sub, tmp_path / "trial")
    assert prov.exit_code == 0 and prov.status == "failed"
    assert prov.sources_changed == ["src/extra.py", "src/model.py"]
    assert "modified its own sources" in prov.failure_reasons[0]
    # the evidence keeps the sources as delivered, not as the replay left them
    assert (tmp_path / "trial/evidence/submission/src/model.py").read_text() == "x = 1\n"
    assert (tmp_path / "trial/evidence/submission/src/extra.py").exists()


@pytest.mark.slow
def test_files_written_outside_the_output_roots_are_listed_but_not_evidence(mini_task, submission, tmp_path):
    sub = submission({"reproduce.sh": GOOD + "mkdir -p scratch; echo x > scratch/tmp.dat\n"})
    prov = replay_trial(mini_task, sub, tmp_path / "trial")
    assert prov.status == "succeeded"
    assert prov.stray_files == ["scratch/tmp.dat"]
    assert not (tmp_path / "trial/evidence/submission/scratch").exists()


@pytest.mark.slow
def test_missing_entry_point_and_nonzero_exit_are_recorded_failures(mini_task, submission, tmp_path):
    prov = replay_trial(mini_task, submission({"README.md": "nothing here"}), tmp_path / "a")
    assert prov.status == "failed" and prov.exit_code is None
    assert prov.failure_reasons == ["the submission has no reproduce.sh"]
    prov = replay_trial(mini_task, submission({"reproduce.sh": "echo partial; exit 7\n"}), tmp_path / "b")
    assert prov.status == "failed" and prov.exit_code == 7
    assert "exited with code 7" in prov.failure_reasons[0]
    assert (tmp_path / "b/replay/stdout.log").read_text() == "partial\n"


@pytest.mark.slow
def test_provenance_records_what_a_reviewer_needs(mini_task, submission, tmp_path):
    sub = submission({"reproduce.sh": GOOD, "src/a.py": "print(1)\n"})
    prov = replay_trial(mini_task, sub, tmp_path / "trial")
    on_disk = Provenance.model_validate_json((tmp_path / "trial/replay/provenance.json").read_text())
    assert on_disk == prov
    assert prov.status == "succeeded" and prov.exit_code == 0 and not prov.timed_out
    assert prov.network == "none" and prov.sandbox["backend"] == "bwrap"
    assert set(prov.source_hashes_before) == {"reproduce.sh", "src/a.py"}
    assert prov.source_hashes_before == prov.source_hashes_after
    assert prov.limits == {"timeout_sec": 60.0, "memory_mb": 1024, "cpus": 1, "max_processes": 256,
                           "max_open_files": 4096, "max_file_mb": 2048, "max_storage_mb": 4096, "max_files": 100_000,
                           "max_log_mb": 64, "gpus": 0}
    assert prov.environment["kind"] == "host" and len(prov.environment["digest"]) == 64
    assert prov.wall_sec > 0


@pytest.mark.slow
def test_evidence_is_read_only_with_a_manifest_and_tampering_is_refused(mini_task, submission, tmp_path):
    trial = tmp_path / "trial"
    replay_trial(mini_task, submission({"reproduce.sh": GOOD}), trial)
    ev = trial / "evidence"
    value = ev / "submission/results/value.json"
    assert not os.access(value, os.W_OK) or os.geteuid() == 0
    assert oct(value.stat().st_mode & 0o777) == "0o444"
    assert oct((ev / "submission").stat().st_mode & 0o777) == "0o555"
    manifest = (ev / "MANIFEST.sha256").read_text()
    assert "  submission/results/value.json" in manifest and "  replay/stdout.log" in manifest
    assert verify(ev) == []
    assert score_trial(mini_task, trial).R == pytest.approx(0.75)  # the expert leaf is pending

    os.chmod(value, 0o644)
    value.write_text('{"value": 41}')
    with pytest.raises(WorkbenchError, match="content changed after freezing"):
        score_trial(mini_task, trial)


@pytest.mark.slow
def test_replay_again_replaces_the_evidence_cleanly(mini_task, submission, tmp_path):
    trial = tmp_path / "trial"
    replay_trial(mini_task, submission({"reproduce.sh": "mkdir -p results; echo 1 > results/one.txt\n"}), trial)
    replay_trial(mini_task, submission({"reproduce.sh": GOOD}), trial)
    assert not (trial / "evidence/submission/results/one.txt").exists()
    assert verify(trial / "evidence") == []
    assert not (trial / "evidence.partial").exists()


def test_a_task_whose_environment_is_not_installed_gets_a_clear_error(tmp_path, submission, monkeypatch):
    root = write_task(tmp_path / "t")
    (root / "environment" / "install.sh").write_text("exit 0\n")
    monkeypatch.setenv("WORKBENCH_ENVS", str(tmp_path / "envs"))
    with pytest.raises(WorkbenchError, match="is not installed.*workbench env install"):
        replay_trial(load_task(root), submission({"reproduce.sh": GOOD}), tmp_path / "trial")


@pytest.mark.slow
def test_provenance_is_written_by_the_workbench_not_the_submission(mini_task, submission, tmp_path):
    forged = {"status": "succeeded", "exit_code": 0}
    sub = submission({"reproduce.sh": "mkdir -p results; exit 3\n", "replay/provenance.json": json.dumps(forged)})
    prov = replay_trial(mini_task, sub, tmp_path / "trial")
    assert prov.status == "failed"
    assert json.loads((tmp_path / "trial/replay/provenance.json").read_text())["exit_code"] == 3


@pytest.mark.slow
def test_a_trial_without_provenance_is_not_scored(mini_task, submission, tmp_path):
    replay_trial(mini_task, submission({"reproduce.sh": GOOD}), tmp_path / "trial")
    (tmp_path / "trial/replay/provenance.json").unlink()  # as if killed between freezing and recording
    with pytest.raises(WorkbenchError, match="the replay did not finish"):
        score_trial(mini_task, tmp_path / "trial")
