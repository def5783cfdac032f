"""Attacks on the data-in-code scan, which the host runs over whatever sources a submission delivers."""

from __future__ import annotations

import base64
import os
import time
import zlib

import pytest

from workbench.replay.data_in_code import MAX_TOTAL_BYTES, scan_text, scan_tree

pytestmark = [pytest.mark.attack]


def test_long_blank_runs_cost_the_host_linear_time(tmp_path):
    """Base64-looking lines separated by 20,000 newlines each: with blanks that could hold newlines on both
    sides of a line break, the scan took 10.7 s for one 4 MB file (170 s for a package of them); now the
    package's 64 MB cap is read in seconds."""
    block = b"A" * 40 + b"\n" * 20_000 + b"x"
    for i in range(MAX_TOTAL_BYTES // (4 << 20)):
        (tmp_path / f"f{i}.py").write_bytes(block * ((4 << 20) // len(block)))
    t = time.monotonic()
    found = scan_tree(tmp_path)
    assert time.monotonic() - t < 30
    assert found["total_bytes"] == 0


def test_data_wrapped_over_lines_or_split_by_commas_is_still_found():
    blob = base64.b64encode(zlib.compress(os.urandom(3000))).decode()
    wrapped = "D = (\n" + "\n".join(f'    "{blob[i:i + 76]}"' for i in range(0, len(blob), 76)) + "\n)\n"
    assert scan_text(wrapped.encode())[0]["kind"] == "base64"
    numbers = "X = [\n" + ",\n".join(f"    {i * 0.137:.6f}" for i in range(300)) + "]\n"
    assert scan_text(numbers.encode())[0]["kind"] == "numbers"
