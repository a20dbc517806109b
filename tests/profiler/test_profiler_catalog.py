"""--list and --verify-instances against the test-double registry, and that neither touches CUDA."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_registry import FAKE_INSTANCES, expected_lines

# One small forward problem: the dry run and the real run below differ only in --dry-run.
SMALL_FWD_PROBLEM = (
    "grouped_conv_fwd_tile",
    "-N",
    "1",
    "-K",
    "8",
    "-C",
    "8",
    "--filter",
    "3,3",
    "--input",
    "8,8",
)


def write_expected(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def test_list_prints_every_instance_in_expected_file_format(run_profiler) -> None:
    result = run_profiler("--list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected_lines()


@pytest.mark.parametrize("direction", ["fwd", "bwd_data", "bwd_weight"])
def test_list_under_a_subcommand_shows_that_direction_only(run_profiler, direction: str) -> None:
    result = run_profiler(f"grouped_conv_{direction}_tile", "--list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected_lines(direction)


def test_list_filters_by_instance_regex(run_profiler) -> None:
    result = run_profiler("--list", "--instances", "_mem_")
    assert result.returncode == 0, result.stderr
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert names == sorted(name for _, name, _ in FAKE_INSTANCES if "_mem_" in name)
    assert len(names) == 2


def test_verify_instances_passes_on_identical_lists(run_profiler, tmp_path: Path) -> None:
    files = [
        write_expected(tmp_path / f"expected_{d}.txt", expected_lines(d))
        for d in ("fwd", "bwd_data", "bwd_weight")
    ]
    result = run_profiler("--verify-instances", *map(str, files))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 expected, 6 registered" in result.stdout
    assert "OK" in result.stdout


def test_verify_instances_covers_only_the_directions_of_its_files(run_profiler, tmp_path: Path) -> None:
    fwd = write_expected(tmp_path / "expected_fwd.txt", expected_lines("fwd"))
    result = run_profiler("--verify-instances", str(fwd))
    assert result.returncode == 0, result.stdout
    assert "(fwd): 3 expected, 3 registered" in result.stdout


def test_verify_instances_reports_a_missing_instance(run_profiler, tmp_path: Path) -> None:
    ghost = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_64x64x64_2x2x1_32x32x16"
    ghost_line = f"{ghost}\tGroupedConvolutionForwardKernel<2,ghost>"
    fwd = write_expected(tmp_path / "expected_fwd.txt", sorted([*expected_lines("fwd"), ghost_line]))
    result = run_profiler("--verify-instances", str(fwd))
    assert result.returncode == 1
    out = result.stdout
    assert "missing (expected, not registered): 1" in out
    assert f"  {ghost_line}" in out
    assert "extra" not in out


def test_verify_instances_reports_an_extra_instance(run_profiler, tmp_path: Path) -> None:
    lines = expected_lines("bwd_weight")
    dropped = lines.pop(0)
    bwd = write_expected(tmp_path / "expected_bwd_weight.txt", lines)
    result = run_profiler("--verify-instances", str(bwd))
    assert result.returncode == 1
    assert "extra (registered, not expected): 1" in result.stdout
    assert f"  {dropped}" in result.stdout
    assert "missing" not in result.stdout


def test_verify_instances_reports_a_different_instance_string(run_profiler, tmp_path: Path) -> None:
    lines = expected_lines("bwd_data")
    name, built = lines[0].split("\t")
    wrong = built.replace("COMPUTE_V3", "COMPUTE_V4")
    bwd = write_expected(tmp_path / "expected_bwd_data.txt", [f"{name}\t{wrong}"])
    result = run_profiler("--verify-instances", str(bwd))
    assert result.returncode == 1
    assert "different instance string: 1" in result.stdout
    assert f"expected: {wrong}" in result.stdout
    assert f"built:    {built}" in result.stdout


def test_verify_instances_takes_the_direction_from_kernel_names(run_profiler, tmp_path: Path) -> None:
    other = write_expected(tmp_path / "mine.txt", expected_lines("bwd_data"))
    assert run_profiler("--verify-instances", str(other)).returncode == 0
    empty = write_expected(tmp_path / "empty.txt", [])
    result = run_profiler("--verify-instances", str(empty))
    assert result.returncode == 2
    assert "cannot tell the direction" in result.stderr
    # A subcommand names it: an empty list for fwd then misses nothing and finds 3 extra.
    result = run_profiler("grouped_conv_fwd_tile", "--verify-instances", str(empty))
    assert result.returncode == 1
    assert "extra (registered, not expected): 3" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [("no tab here\n", ":1: expected"), ("a\tb\na\tc\n", ":2: kernel 'a' listed twice")],
)
def test_verify_instances_rejects_malformed_files(
    run_profiler, tmp_path: Path, content: str, message: str
) -> None:
    bad = tmp_path / "expected_fwd.txt"
    bad.write_text(content)
    result = run_profiler("--verify-instances", str(bad))
    assert result.returncode == 2
    assert message in result.stderr.splitlines()[0]


def test_verify_instances_names_an_unreadable_file(run_profiler, tmp_path: Path) -> None:
    result = run_profiler("--verify-instances", str(tmp_path / "expected_fwd.txt"))
    assert result.returncode == 2
    assert "cannot open" in result.stderr.splitlines()[0]


def _cuda_driver_lookups(run_profiler, *args: str) -> list[str]:
    """Lines where the dynamic loader looks for libcuda: the CUDA runtime's first call dlopens the driver."""
    env = {**os.environ, "LD_DEBUG": "libs"}
    result = run_profiler(*args, env=env)
    return [line for line in result.stderr.splitlines() if "find library=libcuda.so" in line]


def test_list_and_verify_make_no_cuda_call(run_profiler, tmp_path: Path) -> None:
    fwd = write_expected(tmp_path / "expected_fwd.txt", expected_lines("fwd"))
    assert _cuda_driver_lookups(run_profiler, "--list") == []
    assert _cuda_driver_lookups(run_profiler, "--verify-instances", str(fwd)) == []
    assert _cuda_driver_lookups(run_profiler, *SMALL_FWD_PROBLEM, "--dry-run") == []
    # Control: the run path does call CUDA, so the probe can see a call when there is one.
    assert _cuda_driver_lookups(run_profiler, *SMALL_FWD_PROBLEM) != []
