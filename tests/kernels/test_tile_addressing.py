"""The Hopper producer's tile addressing, tap addressing, A columns (advanced per k-tile) and bwd_weight's
im2col boxes (merged groups included) equal the general per-element addressing of every view
(``test_tile_addressing.cpp``, host only)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import run_host_program

SOURCE = Path(__file__).with_name("test_tile_addressing.cpp")


def test_tile_addressing_equals_locate(tmp_path: Path) -> None:
    ran = run_host_program(SOURCE, tmp_path)
    found = re.search(r"checked (\d+) mismatches (\d+)", ran.stdout)
    assert found, ran.stdout + ran.stderr
    checked, mismatches = int(found[1]), int(found[2])
    assert mismatches == 0 and ran.returncode == 0, ran.stdout[-3000:]
    assert checked > 1_000_000, f"only {checked} comparisons"
    taps = re.search(r"tap addressing (\d+)", ran.stdout)
    assert taps and int(taps[1]) > 500_000, "tap addressing was not walked"
    boxes = re.search(r"boxes (\d+)", ran.stdout)
    assert boxes and int(boxes[1]) > 100_000, "bwd_weight's im2col boxes were not walked"
    columns = re.search(r"columns (\d+)", ran.stdout)
    assert columns and int(columns[1]) > 2_000, "A in columns was not walked"
