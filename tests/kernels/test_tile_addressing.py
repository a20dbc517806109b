"""The Hopper producer's tile addressing, tap addressing, A columns (advanced per k-tile) and bwd_weight's
im2col boxes (merged groups included) equal the general per-element addressing of every view
(``test_tile_addressing.cpp``, host only)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import run_host_check

SOURCE = Path(__file__).with_name("test_tile_addressing.cpp")


def test_tile_addressing_equals_locate(tmp_path: Path) -> None:
    output = run_host_check(SOURCE, tmp_path, 1_000_000)
    taps = re.search(r"tap addressing (\d+)", output)
    assert taps and int(taps[1]) > 500_000, "tap addressing was not walked"
    boxes = re.search(r"boxes (\d+)", output)
    assert boxes and int(boxes[1]) > 100_000, "bwd_weight's im2col boxes were not walked"
    columns = re.search(r"columns (\d+)", output)
    assert columns and int(columns[1]) > 2_000, "A in columns was not walked"
