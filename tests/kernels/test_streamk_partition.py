"""The stream-K partition (kernels/implicit_gemm_streamk.cuh), checked on the CPU over 210 shapes."""

from __future__ import annotations

from pathlib import Path

from tests.kernels.conftest import REPO_ROOT, compile_and_run


def test_streamk_partition_covers_every_iteration_once(
    nvcc: Path, cute_include: Path, tmp_path: Path
) -> None:
    source = REPO_ROOT / "tests" / "kernels" / "test_streamk_partition.cu"
    flags = ["--expt-relaxed-constexpr", "-isystem", str(cute_include)]
    output = compile_and_run(nvcc, source, tmp_path, flags)
    assert output.splitlines()[-1] == "210 cases, 0 failures", output[-2000:]
