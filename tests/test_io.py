"""Atomic writes, untrusted trees (copy, hash, delete without following a link) and folders the workbench
may start over."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

import workbench.io as wio
from workbench.errors import WorkbenchError
from workbench.io import (
    Walk,
    atomic_write_json,
    atomic_write_text,
    chmod_tree,
    copy_tree,
    digest_of,
    remove_tree,
    sha256_bytes,
    start_fresh,
    tree_hashes,
)


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# --- atomic writes -------------------------------------------------------------------------------

@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, failure):
    target = tmp_path / "scores.json"
    atomic_write_json(target, {"R": 0.5})

    def fail(fd):
        raise failure

    monkeypatch.setattr(wio.os, "fsync", fail)  # the bytes are written, then the disk gives out
    with pytest.raises(type(failure)):
        atomic_write_json(target, {"R": 1.0})
    assert json.loads(target.read_text()) == {"R": 0.5}
    assert [p.name for p in tmp_path.iterdir()] == ["scores.json"]


def test_a_reader_never_sees_a_half_written_file(tmp_path):
    target = tmp_path / "trial.json"
    versions = [{"v": i, "pad": str(i) * 200_000} for i in range(2)]
    atomic_write_json(target, versions[0])
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            i += 1
            atomic_write_json(target, versions[i % 2])

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(200):
            assert json.loads(target.read_text()) in versions  # whole, old or new: never a torn mix
    finally:
        stop.set()
        t.join()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trial.json"]


def test_a_written_file_is_readable_by_others_and_its_folder_is_made(tmp_path):
    old = os.umask(0o077)
    try:
        atomic_write_text(tmp_path / "a" / "b" / "log.txt", "hello\n")
    finally:
        os.umask(old)
    assert (tmp_path / "a/b/log.txt").read_text() == "hello\n"
    assert _mode(tmp_path / "a/b/log.txt") == 0o644  # a sandbox user or a reviewer reads results too
    atomic_write_json(tmp_path / "p.json", {"where": tmp_path})
    assert (tmp_path / "p.json").read_text().endswith("\n")
    assert json.loads((tmp_path / "p.json").read_text()) == {"where": str(tmp_path)}


# --- folders the workbench may start over -------------------------------------------------------------

def test_start_fresh_empties_only_its_own_folders(tmp_path):
    own = start_fresh(tmp_path / "a")
    (own / "old-run.txt").write_text("x")
    assert list(start_fresh(own).iterdir()) == [own / ".workbench-owned"]  # its own: started over
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text("{}")  # a run made before the marker existed
    start_fresh(run)
    with pytest.raises(WorkbenchError, match="refusing"):
        (tmp_path / "b").mkdir()
        (tmp_path / "b" / "x").write_text("y")
        start_fresh(tmp_path / "b")
    assert (tmp_path / "b" / "x").is_file()


def test_start_fresh_takes_an_empty_folder_and_refuses_a_file_or_a_link(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert [p.name for p in start_fresh(empty).iterdir()] == [".workbench-owned"]
    (tmp_path / "notes.md").write_text("mine")
    with pytest.raises(WorkbenchError, match="not a folder"):
        start_fresh(tmp_path / "notes.md")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.md").write_text("mine")
    (tmp_path / "link").symlink_to(mine)
    with pytest.raises(WorkbenchError, match="not a folder"):
        start_fresh(tmp_path / "link")
    assert (tmp_path / "notes.md").read_text() == "mine" and (mine / "thesis.md").read_text() == "mine"


# --- untrusted trees ---------------------------------------------------------------------------------

@pytest.fixture
def tree(tmp_path):
    """A submission-like tree: files, a nested folder, a link inside, a link out, a FIFO, a read-only folder."""
    src = tmp_path / "src"
    (src / "results" / "deep").mkdir(parents=True)
    (src / "reproduce.sh").write_text("echo hi\n")
    (src / "results" / "deep" / "a.txt").write_text("a")
    (src / "alias.sh").symlink_to("reproduce.sh")
    outside = tmp_path / "host-secret.txt"
    outside.write_text("secret")
    (src / "escape.txt").symlink_to(outside)
    os.mkfifo(src / "pipe")
    (src / "frozen").mkdir()
    (src / "frozen" / "f.txt").write_text("f")
    os.chmod(src / "frozen", 0o555)
    return src


def test_copy_tree_copies_links_as_links_and_refuses_special_files(tree, tmp_path):
    out = copy_tree(tree, tmp_path / "dst")
    dst = tmp_path / "dst"
    assert os.readlink(dst / "escape.txt") == str(tmp_path / "host-secret.txt")  # the link, not the secret
    assert os.readlink(dst / "alias.sh") == "reproduce.sh"
    assert (dst / "results/deep/a.txt").read_text() == "a"
    assert not os.path.lexists(dst / "pipe") and out.refused == [
        "pipe: not a regular file, directory or link (mode prw-r--r--)"]
    assert _mode(dst / "frozen") == 0o555 and (dst / "frozen/f.txt").read_text() == "f"  # modes last


def test_copy_tree_without_links_lists_them_instead(tree, tmp_path):
    out = copy_tree(tree, tmp_path / "dst", keep_links=False)
    assert out.links == {"alias.sh": "reproduce.sh", "escape.txt": str(tmp_path / "host-secret.txt")}
    assert not os.path.lexists(tmp_path / "dst/escape.txt") and not os.path.lexists(tmp_path / "dst/alias.sh")


def test_copy_tree_skips_a_file_hard_linked_from_outside(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "private.txt").write_text("private")
    os.link(tmp_path / "private.txt", src / "innocent.txt")  # as root, copying it would copy the private file
    (src / "one.txt").write_text("1")
    os.link(src / "one.txt", src / "two.txt")  # both names inside the tree: copied
    out = copy_tree(src, tmp_path / "dst")
    assert out.hard_links == ["innocent.txt"] and not (tmp_path / "dst/innocent.txt").exists()
    assert (tmp_path / "dst/two.txt").read_text() == "1"


def test_copy_tree_without_metadata_keeps_contents_and_permissions_only(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "run.sh").write_text("echo\n")
    os.chmod(src / "run.sh", 0o755)
    os.utime(src / "run.sh", (1_000_000, 1_000_000))
    copy_tree(src, tmp_path / "dst", metadata=False)
    assert _mode(tmp_path / "dst/run.sh") == 0o755
    assert (tmp_path / "dst/run.sh").stat().st_mtime != 1_000_000  # a timestamp carries nothing across
    copy_tree(src, tmp_path / "kept")
    assert (tmp_path / "kept/run.sh").stat().st_mtime == 1_000_000


def test_remove_tree_deletes_read_only_and_closed_folders_but_never_through_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    doomed = tmp_path / "doomed"
    (doomed / "ro" / "locked").mkdir(parents=True)
    (doomed / "ro" / "locked" / "x").write_text("x")
    (doomed / "to-outside").symlink_to(outside)
    os.chmod(doomed / "ro" / "locked", 0)
    os.chmod(doomed / "ro", 0o555)
    remove_tree(doomed)
    assert not os.path.lexists(doomed)
    assert (outside / "keep.txt").read_text() == "keep"
    remove_tree(doomed)  # missing: fine
    (tmp_path / "link").symlink_to(outside)
    remove_tree(tmp_path / "link")  # the link goes, not what it names
    assert not os.path.lexists(tmp_path / "link") and (outside / "keep.txt").is_file()


def test_walk_lists_parents_first_names_sorted_and_refuses_what_is_too_deep(tmp_path):
    (tmp_path / "b" / "c" / "d").mkdir(parents=True)
    (tmp_path / "b" / "c" / "d" / "f").write_text("")
    (tmp_path / "a").write_text("")
    (tmp_path / "skip").mkdir()
    walk = Walk(tmp_path, skip_top=["skip"], max_depth=3)
    assert [e.rel for e in walk] == ["a", "b", "b/c"]
    assert walk.refused == ["b/c/d: nested deeper than 3 directories"]


def test_chmod_tree_opens_a_folder_left_at_mode_000(tmp_path):
    (tmp_path / "t" / "shut").mkdir(parents=True)
    (tmp_path / "t" / "shut" / "f").write_text("")
    os.chmod(tmp_path / "t" / "shut", 0)
    chmod_tree(tmp_path / "t", 0o444, 0o555)
    assert _mode(tmp_path / "t/shut") == 0o555 and _mode(tmp_path / "t/shut/f") == 0o444


def test_tree_hashes_hash_a_link_as_its_target_text_and_see_a_changed_byte(tmp_path):
    (tmp_path / "data.txt").write_text("42")
    (tmp_path / "alias").symlink_to("data.txt")
    before = tree_hashes(tmp_path)
    assert before == {"alias": "symlink:" + sha256_bytes(b"data.txt"), "data.txt": sha256_bytes(b"42")}
    (tmp_path / "data.txt").write_text("43")
    after = tree_hashes(tmp_path)
    assert after["alias"] == before["alias"] and after["data.txt"] != before["data.txt"]
    assert digest_of(after) != digest_of(before)


def test_digest_of_depends_on_names_and_hashes_not_order():
    assert digest_of({"a": "1", "b": "2"}) == digest_of({"b": "2", "a": "1"})
    assert digest_of({"a": "1", "b": "2"}) != digest_of({"a": "2", "b": "1"})
    assert digest_of({"a": "1"}) != digest_of({"b": "1"}) and digest_of({"a": "1"}) != digest_of({})
