"""Merged groups by diagonal blocks on the Hopper path (fwd and bwd_data, no zero MACs) on the GPU: correct on
poisoned outputs against the reference, and the diagonal mode chosen exactly where the per-group extents match
(tests/kernels/test_merged_groups_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import REPO_ROOT, build_and_run


@pytest.mark.gpu
def test_merged_groups_diagonal(tmp_path: Path) -> None:
    output = build_and_run(REPO_ROOT / "tests" / "kernels" / "test_merged_groups_check.cu", tmp_path)
    print(output)  # shown with -rP: the per-case lines
    lines = output.splitlines()
    assert lines[-1].endswith(" failures") and lines[-1].split()[-2] == "0", "\n".join(
        line for line in lines if line.startswith("FAIL")
    )
    checked, diagonal = int(lines[-1].split()[0]), int(lines[-1].split()[2])
    assert checked >= 25
    assert diagonal >= 15  # both directions, 16/16 and 32/32, every hand instance on its problems
    assert any(" diagonal " in line and line.startswith("PASS bwdd_") for line in lines)
    assert any(" gathers " in line for line in lines)
