"""The persistent CTAs' unit order (``sm90/tile_scheduler.hpp``, ``unit_of_round``) takes every unit exactly
once, each CTA's in increasing order, and in snake order balances a stride-2 launch's phases
(``test_unit_order.cpp``, host only)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import run_host_check

SOURCE = Path(__file__).with_name("test_unit_order.cpp")


def test_unit_order_covers_every_unit_once_and_balances_phases(tmp_path: Path) -> None:
    output = run_host_check(SOURCE, tmp_path, 10_000)
    found = re.search(r"busiest CTA k-tiles in order (\d+) snake (\d+)", output)
    assert found, output
    # 52 units of 32 k-tiles, 104 of 16, 52 of 8 on 132 CTAs: in order CTAs 0-23 take a 32 and a 16; in snake
    # order the second round runs backwards, so the 32s get nothing more and no CTA holds more than 32
    assert (int(found[1]), int(found[2])) == (48, 32)
