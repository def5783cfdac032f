"""The frozen evidence set: the freeze keeps regular files and folders only (a link is recorded as text, never
followed), the manifest is what ``sha256sum -c`` checks, a changed byte is detected, and the readers stay inside."""

from __future__ import annotations

import os
import stat
import subprocess

import numpy as np
import pytest

from tests.conftest import write_files
from workbench.errors import WorkbenchError
from workbench.evidence import (
    MANIFEST,
    Evidence,
    MissingEvidence,
    ensure_intact,
    freeze,
    make_writable,
    manifest_text,
    normalize,
    parse_manifest,
    read_links,
    read_manifest,
    verify,
)
from workbench.io import sha256_bytes, tree_hashes

FILES = {"submission/reproduce.sh": "echo\n", "submission/results/value.json": '{"value": 42}',
         "submission/results/table.csv": "x,y\n1,2\n3,4\n", "replay/stdout.log": "done\n"}


@pytest.fixture
def staged(tmp_path):
    """What a replay leaves to freeze: outputs, a link to a host file, a link to a host folder, a FIFO."""
    stage = write_files(tmp_path / "stage", FILES)
    host = write_files(tmp_path / "host", {"secret.txt": "private", "dir/inner.txt": "private too"})
    os.symlink(host / "secret.txt", stage / "submission/results/leak.txt")
    os.symlink(host / "dir", stage / "submission/results/leakdir")
    os.symlink("value.json", stage / "submission/results/alias.json")
    os.mkfifo(stage / "submission/results/pipe")
    return stage


@pytest.fixture
def frozen(staged, tmp_path):
    digest, refused = freeze(staged, tmp_path / "evidence")
    return tmp_path / "evidence", digest, refused


def test_the_freeze_keeps_regular_files_and_folders_only(frozen, tmp_path):
    ev, _, refused = frozen
    kept = {str(p.relative_to(ev)) for p in ev.rglob("*") if not p.is_dir()}
    assert kept == set(FILES) | {MANIFEST}  # no link, no FIFO, nothing from behind a link
    assert refused == ["submission/results/pipe: not a regular file, directory or link (mode prw-r--r--)"]
    assert read_links(ev) == {"submission/results/leak.txt": str(tmp_path / "host/secret.txt"),
                              "submission/results/leakdir": str(tmp_path / "host/dir"),
                              "submission/results/alias.json": "value.json"}
    assert set(read_manifest(ev)) == set(FILES)
    assert read_manifest(ev)["submission/results/value.json"] == sha256_bytes(b'{"value": 42}')
    assert "private" not in "".join(p.read_text() for p in ev.rglob("*") if p.is_file())


def test_the_frozen_set_is_read_only(frozen):
    ev, _, _ = frozen
    for p in [ev, *ev.rglob("*")]:
        assert stat.S_IMODE(p.stat().st_mode) == (0o555 if p.is_dir() else 0o444), p


def test_the_manifest_is_what_sha256sum_checks(tmp_path):
    stage = write_files(tmp_path / "stage", {**FILES, "submission/results/new\nline.txt": "n",
                                             "submission/results/back\\slash.txt": "b"})
    os.symlink("value.json", stage / "submission/results/alias.json")
    freeze(stage, tmp_path / "evidence")
    proc = subprocess.run(["sha256sum", "-c", MANIFEST], cwd=tmp_path / "evidence", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(": OK") == len(FILES) + 2
    assert "1 line is improperly formatted" in proc.stderr  # the link's line: recorded, not checked


def test_the_manifest_round_trips_hostile_names_and_link_targets():
    files = {"submission/a\nb.txt": "1" * 64, "submission/back\\slash": "2" * 64, "submission/cr\r": "3" * 64,
             "submission/two  spaces": "4" * 64, "submission/symlink x": "5" * 64}
    links = {"submission/l\nink": 'target "quoted"\nand a newline', "submission/plain": "../../etc/passwd"}
    text = manifest_text(files, links)
    assert len(text.splitlines()) == len(files) + len(links)  # one line per entry, whatever its name
    assert parse_manifest(text) == (files, links)


def test_a_changed_byte_an_added_and_a_removed_file_are_detected(frozen):
    ev, digest, _ = frozen
    assert verify(ev, digest) == []
    make_writable(ev)
    value = ev / "submission/results/value.json"
    value.write_text('{"value": 43}')  # one byte
    (ev / "submission/results/extra.json").write_text("{}")
    (ev / "submission/results/table.csv").unlink()
    os.symlink("value.json", ev / "submission/results/planted")
    assert sorted(verify(ev, digest)) == sorted([
        "'submission/results/value.json': content changed after freezing",
        "'submission/results/extra.json': not in the manifest (added after freezing)",
        "'submission/results/table.csv': listed in the manifest but missing",
        "'submission/results/planted': not a regular file (sealed evidence holds none; added after freezing)"])
    with pytest.raises(WorkbenchError, match="refusing to score"):
        ensure_intact(ev, digest)


def test_a_manifest_rewritten_with_the_evidence_is_caught_by_the_recorded_digest(frozen):
    ev, digest, _ = frozen
    make_writable(ev)
    (ev / "submission/results/value.json").write_text('{"value": 43}')
    hashes = tree_hashes(ev, exclude_top=[MANIFEST])
    (ev / MANIFEST).write_text(manifest_text(hashes, read_links(ev)))  # a consistent forgery
    assert verify(ev) == []
    assert verify(ev, digest) == [f"{MANIFEST}: differs from the digest the replay recorded in its provenance"]


def test_freezing_again_replaces_the_evidence_whole(frozen, tmp_path):
    ev, _, _ = frozen
    stage = write_files(tmp_path / "stage2", {"submission/results/other.json": "{}"})
    digest, refused = freeze(stage, ev)
    assert refused == [] and verify(ev, digest) == []
    assert set(read_manifest(ev)) == {"submission/results/other.json"} and read_links(ev) == {}
    assert not (tmp_path / "evidence.partial").exists()


@pytest.mark.parametrize(("given", "rel"), [("results/v.json", "submission/results/v.json"),
                                            ("./replay/stdout.log", "replay/stdout.log"),
                                            ("/submission/a", "submission/a"), (" submission/b ", "submission/b")])
def test_evidence_paths_are_read_under_submission_unless_they_say_otherwise(given, rel):
    assert normalize(given) == rel


def test_readers_refuse_links_escapes_and_what_is_missing(frozen):
    ev = Evidence(frozen[0])
    with pytest.raises(MissingEvidence, match="symbolic link to .*secret.txt.*never followed"):
        ev.read_text("results/leak.txt")
    with pytest.raises(MissingEvidence, match="outside the evidence"):
        ev.read_text("results/../../../host/secret.txt")
    with pytest.raises(MissingEvidence, match="not found in the evidence") as exc:
        ev.read_text("results/nothing.json")
    assert exc.value.path == "submission/results/nothing.json"  # what a scorer zeroes the dependent leaves on
    assert not ev.exists("results/alias.json") and ev.exists("results/value.json")


def test_readers_read_text_json_csv_and_arrays(tmp_path):
    stage = write_files(tmp_path / "stage", {**FILES, "submission/results/bad.json": "{"})
    np.savez(stage / "submission/results/arrs.npz", a=np.arange(3))
    freeze(stage, tmp_path / "evidence")
    ev = Evidence(tmp_path / "evidence")
    assert ev.read_json("results/value.json") == {"value": 42}
    assert ev.read_text("replay/stdout.log", limit=2) == "do"
    assert ev.read_csv("results/table.csv")["y"].tolist() == [2, 4]
    assert ev.load_array("results/table.csv", "x").tolist() == [1, 3]
    assert ev.load_array("results/arrs.npz", "a").tolist() == [0, 1, 2]
    with pytest.raises(MissingEvidence, match="name one of its arrays \\(a\\)"):
        ev.load_array("results/arrs.npz")
    with pytest.raises(MissingEvidence, match="is not valid JSON"):
        ev.read_json("results/bad.json")
    assert ev.glob("results/*.json") == ["submission/results/bad.json", "submission/results/value.json"]
    assert ev.glob("**/value.json") == ["submission/results/value.json"]  # ** crosses folders
    assert ev.glob("replay/*.log") == ["replay/stdout.log"]
    assert ev.has_content("results") and not ev.has_content("results/nothing")


def test_a_single_star_stays_in_its_folder(tmp_path):
    """fnmatch's * matched '/': results/*.csv took every subfolder's files, so min_files counted nested ones."""
    stage = write_files(tmp_path / "stage", {"submission/results/a.csv": "1", "submission/results/old/b.csv": "2"})
    freeze(stage, tmp_path / "evidence")
    ev = Evidence(tmp_path / "evidence")
    assert ev.glob("results/**/*.csv") == ["submission/results/a.csv", "submission/results/old/b.csv"]  # any depth
    assert ev.glob("results/**") == ["submission/results/a.csv", "submission/results/old/b.csv"]
    assert ev.glob("results/*.csv") == ev.glob("results/?.csv") == ["submission/results/a.csv"]
    assert ev.glob("results/[!a].csv") == [] and ev.glob("results/*/b.csv") == ["submission/results/old/b.csv"]
