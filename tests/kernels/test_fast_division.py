"""Division by multiplier and shift (``fast_division.hpp``) equals the division operator for every divisor and
dividend below 2^31 tried, and the Hopper tile schedule's units decompose by it as by 64-bit divisions
(``test_fast_division.cpp``, host only)."""

from __future__ import annotations

from pathlib import Path

from tests.kernels.conftest import run_host_check

SOURCE = Path(__file__).with_name("test_fast_division.cpp")


def test_fast_division_equals_division(tmp_path: Path) -> None:
    output = run_host_check(SOURCE, tmp_path, 10_000_000)
    assert "large schedule fast 0" in output, "a schedule past 31 bits took the 32-bit path"
