"""Division by multiplier and shift (``fast_division.hpp``) equals the division operator for every divisor and
dividend below 2^31 tried, and the Hopper tile schedule's units decompose by it as by 64-bit divisions
(``test_fast_division.cpp``, host only)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import run_host_program

SOURCE = Path(__file__).with_name("test_fast_division.cpp")


def test_fast_division_equals_division(tmp_path: Path) -> None:
    ran = run_host_program(SOURCE, tmp_path)
    found = re.search(r"checked (\d+) mismatches (\d+)", ran.stdout)
    assert found, ran.stdout + ran.stderr
    checked, mismatches = int(found[1]), int(found[2])
    assert mismatches == 0 and ran.returncode == 0, ran.stdout[-3000:]
    assert checked > 10_000_000, f"only {checked} comparisons"
    assert "large schedule fast 0" in ran.stdout, "a schedule past 31 bits took the 32-bit path"
