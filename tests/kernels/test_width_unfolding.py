"""Width unfolding (kernels/width_unfolding.hpp) is exact: the unfolded layer over the unfolded input and
padded weights gives the forward output and, cut back, the weight gradient of the layer as given
(``test_width_unfolding.cpp``, host only, float64 on small integers)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.kernels.conftest import REPO_ROOT

SOURCE = Path(__file__).with_name("test_width_unfolding.cpp")


def test_width_unfolding_is_exact(tmp_path: Path) -> None:
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no host C++ compiler (g++) on PATH")
    binary = tmp_path / "width_unfolding"
    include = f"-I{REPO_ROOT / 'instances' / 'include'}"
    cmd = [compiler, "-std=c++17", "-O1", include, str(SOURCE), "-o", str(binary)]
    built = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=300)
    found = re.search(r"problems (\d+) compared (\d+) mismatches (\d+)", ran.stdout)
    assert found, ran.stdout + ran.stderr
    problems, compared, mismatches = (int(found[i]) for i in (1, 2, 3))
    assert mismatches == 0 and ran.returncode == 0, ran.stdout[-3000:]
    assert problems == 24
    assert compared > 10_000, f"only {compared} comparisons"
