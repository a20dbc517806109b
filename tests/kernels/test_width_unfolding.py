"""Width unfolding (kernels/width_unfolding.hpp) is exact: the unfolded layer over the unfolded input and
padded weights gives the forward output and, cut back, the weight gradient of the layer as given
(``test_width_unfolding.cpp``, host only, float64 on small integers)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import run_host_program

SOURCE = Path(__file__).with_name("test_width_unfolding.cpp")


def test_width_unfolding_is_exact(tmp_path: Path) -> None:
    ran = run_host_program(SOURCE, tmp_path)
    found = re.search(r"problems (\d+) compared (\d+) mismatches (\d+)", ran.stdout)
    assert found, ran.stdout + ran.stderr
    problems, compared, mismatches = (int(found[i]) for i in (1, 2, 3))
    assert mismatches == 0 and ran.returncode == 0, ran.stdout[-3000:]
    assert problems == 24
    assert compared > 10_000, f"only {compared} comparisons"
