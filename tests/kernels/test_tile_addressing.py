"""The Hopper producer's tile addressing, tap addressing and A columns (advanced per k-tile) equal the general
per-element addressing of every view (``test_tile_addressing.cpp``, host only)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.kernels.conftest import REPO_ROOT

SOURCE = Path(__file__).with_name("test_tile_addressing.cpp")


def test_tile_addressing_equals_locate(tmp_path: Path) -> None:
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no host C++ compiler (g++) on PATH")
    binary = tmp_path / "tile_addressing"
    include = f"-I{REPO_ROOT / 'instances' / 'include'}"
    cmd = [compiler, "-std=c++17", "-O1", include, str(SOURCE), "-o", str(binary)]
    built = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=300)
    found = re.search(r"checked (\d+) mismatches (\d+)", ran.stdout)
    assert found, ran.stdout + ran.stderr
    checked, mismatches = int(found[1]), int(found[2])
    assert mismatches == 0 and ran.returncode == 0, ran.stdout[-3000:]
    assert checked > 1_000_000, f"only {checked} comparisons"
    taps = re.search(r"tap addressing (\d+)", ran.stdout)
    assert taps and int(taps[1]) > 500_000, "tap addressing was not walked"
    columns = re.search(r"columns (\d+)", ran.stdout)
    assert columns and int(columns[1]) > 2_000, "A in columns was not walked"
