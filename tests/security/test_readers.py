"""Attacks on what reads the evidence: a link to the task's private labels for the hidden evaluator, a
decompression bomb for the checks, the judge's tools and the reviewer's previews, and special files."""

from __future__ import annotations

import json
import resource
import struct
import zlib
from pathlib import Path

import pytest

from tests.conftest import REPO, write_files
from tests.security.conftest import hostile_task
from workbench.evidence import read_links, read_manifest
from workbench.reader.client import Reader
from workbench.replay.trial import replay_trial
from workbench.scoring import score_trial
from workbench.task import load_task

pytestmark = [pytest.mark.attack, pytest.mark.slow]
WDBC = REPO / "tasks" / "wdbc-diagnosis" / "tests"


@pytest.mark.slow
def test_the_evaluator_cannot_be_pointed_at_the_private_labels_by_a_link(tmp_path):
    """The real wdbc task, its evaluator in its environment (scikit-learn: it re-runs the declared CV)."""
    from workbench.sandbox.environments import install_env

    task = load_task(WDBC.parent)
    install_env(task)
    labels = task.paths.tests / "refs" / "labels.csv"
    script = ("for i in all-features three-features; do mkdir -p results/$i; done\n"
              f"ln -s {labels} results/all-features/predictions.csv\n"  # the host path of the labels
              "ln -s /task/tests/refs/labels.csv results/three-features/predictions.csv\n")  # where readers see them
    replay_trial(task, write_files(tmp_path / "sub", {"reproduce.sh": script}), tmp_path / "t")
    s = score_trial(task, tmp_path / "t")
    assert s.sota["g"] == -1.0 and all(i["value"] is None for i in s.sota["instances"].values())
    assert "missing: predictions.csv" in s.sota["instances"]["all-features"]["error"]
    links = read_links(tmp_path / "t" / "evidence")  # recorded as text, never made in the evidence
    assert links["submission/results/all-features/predictions.csv"] == str(labels)
    assert not (tmp_path / "t" / "evidence" / "submission" / "results" / "all-features" / "predictions.csv").exists()


def bomb(path: Path, gigabytes: int = 1) -> int:
    """An .npz of about a megabyte whose one array decompresses to ``gigabytes`` of zeros; returns its size."""
    n = gigabytes * 1024**3 // 8
    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': ({n},), }}".encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    prefix = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header
    comp, chunk = zlib.compressobj(9, zlib.DEFLATED, -15), b"\0" * (1 << 24)
    parts, crc = [comp.compress(prefix)], zlib.crc32(prefix)
    for _ in range(n * 8 // len(chunk)):
        parts.append(comp.compress(chunk))
        crc = zlib.crc32(chunk, crc)
    parts.append(comp.flush())
    data, raw, name = b"".join(parts), len(prefix) + n * 8, b"x.npy"
    # a zip archive written by hand around the deflate stream (zipfile would inflate nothing, but holds it all)
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), raw, len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(data), raw, len(name),
                          0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)
    return path.stat().st_size


BOMB_RUBRIC = {"id": "r", "sub_tasks": [
    {"id": "shape", "weight": 1, "task_category": "Validation",
     "check": {"kind": "array_shape", "path": "results/arrays.npz", "key": "x", "min_rows": 1}},
    {"id": "ok", "weight": 1, "task_category": "Execution", "check": {"kind": "replay_succeeded"}}]}


@pytest.fixture
def bombed(tmp_path):
    task = hostile_task(tmp_path / "task", sources='["**"]')  # the bomb is shipped as data: let it through
    (task.paths.tests / "rubric.json").write_text(json.dumps(BOMB_RUBRIC))
    task = load_task(task.root)
    sub = write_files(tmp_path / "sub", {"reproduce.sh": "mkdir -p results\ncp data/bomb.bin results/arrays.npz\n"})
    (sub / "data").mkdir()
    size = bomb(sub / "data" / "bomb.bin")
    replay_trial(task, sub, tmp_path / "t")
    return task, tmp_path / "t", size


def test_a_decompression_bomb_is_read_only_in_the_confined_reader(bombed):
    task, trial, size = bombed
    assert size < 2 * 1024**2  # a megabyte on disk, a gigabyte once read (the task's limit is 512 MB)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    s = score_trial(task, trial)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    by = {lf.id: lf for lf in s.leaves}
    assert (by["shape"].status, by["shape"].score) == ("scored", 0.0) and "memory" in by["shape"].rationale
    assert by["ok"].score == 1.0 and not s.needs_rescoring  # the other check still ran, in a fresh reader
    assert grown_mb < 100, f"the workbench's own memory grew by {grown_mb:.0f} MB"


def test_the_bomb_cannot_exhaust_the_judges_tools_or_the_reviewers_previews(bombed):
    _, trial, _ = bombed
    prov = json.loads((trial / "replay" / "provenance.json").read_text())
    reader = Reader(trial / "evidence", prov, memory_mb=256, timeout_sec=60)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    answer, listing = reader.tools([("array_stats", {"path": "submission/results/arrays.npz", "key": "x"}),
                                    ("list_files", {"path": "submission/results"})], 4000)
    html = reader.previews(["submission/results/arrays.npz"], read_manifest(trial / "evidence"))
    assert answer.startswith("error") and "memory" in answer
    assert "arrays.npz" in listing or listing.startswith("error")
    assert "memory" in html and (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 100


def test_links_fifos_and_sockets_never_reach_the_evidence(attack):
    out = attack("mkdir -p results\necho '{\"value\": 42}' > results/value.json\nmkfifo results/pipe\n"
                 "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.bind('results/sock')\"\n"
                 "ln -s value.json results/alias.json\nln -s /etc/shadow results/shadow\n")
    evidence = out.trial / "evidence"
    kinds = {p.relative_to(evidence).as_posix(): (p.is_symlink(), p.is_fifo(), p.is_socket())
             for p in evidence.rglob("*")}
    assert not any(any(k) for k in kinds.values())  # regular files and directories only
    assert read_links(evidence) == {"submission/results/alias.json": "value.json",
                                    "submission/results/shadow": "/etc/shadow"}
    assert any("results/pipe" in r for r in out.prov.refused_entries)
    assert any("results/sock" in r for r in out.prov.refused_entries)
