"""Argument parsing (CK positional, named flags), bad input, --help, problem tables, the no-GPU error."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpu_probe import gpu_present

SHARED_PROBLEMS = Path(__file__).resolve().parents[3] / "shared" / "problems"

# ckProfiler grouped_conv_fwd_tile: dtype 1 (fp16), layout 1, index 0, verify 1, init 2, log 0, time 1,
# ndim 2, G N K C, filter, input, strides, dilations, left pads, right pads.
CK_STEM = [
    "1",
    "1",
    "0",
    "1",
    "2",
    "0",
    "1",
    "2",
    "1",
    "32",
    "64",
    "3",
    "7",
    "7",
    "224",
    "224",
    "2",
    "2",
    "1",
    "1",
    "3",
    "3",
    "3",
    "3",
]
STEM_TEXT = "2D G=1 N=32 K=64 C=3 in=224x224 filter=7x7 stride=2x2 dilation=1x1 pad=3x3/3x3"


def first_job_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("problem "))


def test_positional_arguments_parse_as_ck_does(run_profiler) -> None:
    result = run_profiler("grouped_conv_fwd_tile", *CK_STEM, "--dry-run")
    assert result.returncode == 0, result.stderr
    assert first_job_line(result.stdout) == f"problem #0: fwd fp16 {STEM_TEXT}, 2 matching instances"
    assert "verify 1, init float, time 1" in result.stdout


def test_named_flags_describe_the_same_problem(run_profiler) -> None:
    result = run_profiler(
        "--direction",
        "fwd",
        "--dtype",
        "fp16",
        "-G",
        "1",
        "-N",
        "32",
        "-K",
        "64",
        "-C",
        "3",
        "--filter",
        "7,7",
        "--input",
        "224,224",
        "--stride",
        "2,2",
        "--dilation",
        "1,1",
        "--pad",
        "3,3",
        "--dry-run",
    )
    assert result.returncode == 0, result.stderr
    assert first_job_line(result.stdout) == f"problem #0: fwd fp16 {STEM_TEXT}, 2 matching instances"


@pytest.mark.parametrize(("code", "dtype"), [("0", "fp32"), ("1", "fp16"), ("2", "bf16")])
def test_ck_data_type_codes(run_profiler, code: str, dtype: str) -> None:
    result = run_profiler("grouped_conv_bwd_data_tile", code, *CK_STEM[1:], "--dry-run")
    assert result.returncode == 0, result.stderr
    assert first_job_line(result.stdout).startswith(f"problem #0: bwd_data {dtype} ")


def test_3d_positional_problem_with_asymmetric_pads_and_trailing_split_k(run_profiler) -> None:
    args = [
        "2",
        "1",
        "0",
        "0",
        "1",
        "0",
        "0",
        "3",
        "4",
        "2",
        "64",
        "32",
        "3",
        "3",
        "3",
        "16",
        "16",
        "16",
        "1",
        "2",
        "2",
        "1",
        "1",
        "1",
        "1",
        "1",
        "1",
        "0",
        "1",
        "1",
        "4",
    ]
    result = run_profiler("grouped_conv_bwd_weight_tile", *args, "--dry-run")
    assert result.returncode == 0, result.stderr
    assert first_job_line(result.stdout) == (
        "problem #0: bwd_weight bf16 3D G=4 N=2 K=64 C=32 in=16x16x16 filter=3x3x3 stride=1x2x2 "
        "dilation=1x1x1 pad=1x1x1/0x1x1 split-K 4, 0 matching instances"
    )
    assert "verify 0, init int, time 0" in result.stdout


def test_named_sweep_over_directions_dtypes_and_split_k(run_profiler) -> None:
    result = run_profiler(
        "--direction",
        "fwd,bwd_weight",
        "--dtype",
        "fp16,bf16",
        "-N",
        "2",
        "-K",
        "8",
        "-C",
        "8",
        "--filter",
        "3,3",
        "--input",
        "9,9",
        "--left-pad",
        "1,1",
        "--right-pad",
        "0,0",
        "--split-k",
        "1,2,8",
        "--dry-run",
    )
    assert result.returncode == 0, result.stderr
    jobs = [line for line in result.stdout.splitlines() if line.startswith("problem ")]
    assert [line.split(" ")[2:4] for line in jobs] == [
        ["fwd", "fp16"],
        ["fwd", "bf16"],
        ["bwd_weight", "fp16"],
        ["bwd_weight", "bf16"],
    ]
    assert "pad=1x1/0x0 split-K 1,2,8, 1 matching instances" in jobs[3]
    assert "  grouped_conv_bwd_weight_bf16_nhwgc_2d" in result.stdout


def test_instances_regex_filters_the_run(run_profiler) -> None:
    result = run_profiler("grouped_conv_fwd_tile", *CK_STEM, "--instances", "interwave", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert first_job_line(result.stdout).endswith(", 1 matching instances")


BAD_INPUTS = [
    pytest.param(
        [
            "grouped_conv_fwd_tile",
            "-G",
            "2",
            "-N",
            "1",
            "-K",
            "8",
            "-C",
            "3",
            "--filter",
            "3,3",
            "--input",
            "8,8",
        ],
        "C=3 is not divisible by G=2",
        id="c-not-divisible-by-g",
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", "-N", "1", "-K", "8", "-C", "8", "--filter", "5,5", "--input", "3,3"],
        "output size along H is not positive",
        id="negative-output-size",
    ),
    pytest.param(
        [
            "grouped_conv_fwd_tile",
            "--dtype",
            "fp8",
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
        ],
        "unknown dtype 'fp8' (accepted: fp16, bf16, fp32)",
        id="unknown-dtype",
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", "7", *CK_STEM[1:]], "unknown data type code '7'", id="unknown-dtype-code"
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", *CK_STEM[:-1]], "needs 24 positional arguments", id="short-positional"
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", "1", "2", *CK_STEM[2:]], "layout '2' is not accepted", id="layout"
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", *CK_STEM[:-2], "-1", "3"], "negative padding along H", id="negative-pad"
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", *CK_STEM, "--split-k", "2"],
        "--split-k applies to bwd_weight only",
        id="split-k-fwd",
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", "-N", "x", "-K", "8"], "-N: 'x' is not an integer", id="not-integer"
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", "--frobnicate"], "unknown option '--frobnicate'", id="unknown-option"
    ),
    pytest.param(
        ["grouped_conv_sideways_tile"], "unknown subcommand 'grouped_conv_sideways_tile'", id="subcommand"
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", "-N", "1", "-K", "8", "-C", "8", "--filter", "3,3,3", "--input", "8,8"],
        "--input: 2 values given, a 3D problem needs 3",
        id="ndim-mismatch",
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", "--instances", "(["], "is not a valid regular expression", id="regex"
    ),
    pytest.param(
        ["grouped_conv_fwd_tile", "--direction", "bwd_data"], "--direction contradicts", id="direction"
    ),
    pytest.param(["--direction", "fwd"], "no problem given", id="no-problem"),
    pytest.param(
        ["grouped_conv_fwd_tile", *CK_STEM, "--repeat", "0"], "--repeat: 0 is out of range", id="repeat"
    ),
    pytest.param(["grouped_conv_fwd_tile", *CK_STEM, "--problems", "x.csv"], "not both", id="problem-twice"),
    pytest.param(["--list", "-N", "4"], "--list takes no problem", id="list-with-problem"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUTS)
def test_bad_input_gets_one_line_and_usage_exit_2(run_profiler, args: list[str], message: str) -> None:
    result = run_profiler(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: ")
    assert message in lines[0]
    assert lines[1].startswith("usage: tiledispatch_profiler")
    assert sum(line.startswith("error") for line in lines) == 1
    assert result.stdout == ""


@pytest.mark.parametrize("direction", ["fwd", "bwd_data", "bwd_weight"])
def test_help_for_each_subcommand(run_profiler, direction: str) -> None:
    result = run_profiler(f"grouped_conv_{direction}_tile", "--help")
    assert result.returncode == 0
    assert result.stdout.startswith(
        f"usage: tiledispatch_profiler grouped_conv_{direction}_tile <dtype 0 fp32|1 fp16"
    )
    assert ("--split-k" in result.stdout) == (direction == "bwd_weight")


def test_general_help(run_profiler) -> None:
    result = run_profiler("--help")
    assert result.returncode == 0
    assert "--verify-instances" in result.stdout and "--problems" in result.stdout


PROBLEM_HEADER = ",".join(
    [
        *("name", "N", "C", "K", "G", "Di", "Hi", "Wi", "Z", "Y", "X", "stride_d", "stride_h", "stride_w"),
        *("pad_d", "pad_h", "pad_w", "dilation_d", "dilation_h", "dilation_w"),
    ]
)


def test_problem_table_rows_become_jobs(run_profiler, tmp_path: Path) -> None:
    table = tmp_path / "p.csv"
    table.write_text(
        f"{PROBLEM_HEADER}\nstem,32,3,64,1,1,224,224,1,7,7,1,2,2,0,3,3,1,1,1\n"
        "c3d,2,32,64,4,8,16,16,3,3,3,1,1,1,1,1,1,1,1,1\n"
    )
    result = run_profiler("grouped_conv_fwd_tile", "--problems", str(table), "--dry-run")
    assert result.returncode == 0, result.stderr
    jobs = [line for line in result.stdout.splitlines() if line.startswith("problem ")]
    assert jobs[0] == f"problem stem: fwd fp16 {STEM_TEXT}, 2 matching instances"
    assert jobs[1].startswith("problem c3d: fwd fp16 3D G=4 N=2 K=64 C=32 in=8x16x16 filter=3x3x3")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("bad,1,8,x,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1", ":3: column 'K': 'x' is not an integer"),
        (
            "bad,1,9,8,2,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1",
            ":3: invalid problem 'bad': C=9 is not divisible by G=2",
        ),
        ("bad,1,8,8,1,1,8,8,1,3,3", ":3: 11 cells, the header has 20"),
    ],
)
def test_problem_table_errors_name_file_line_and_column(
    run_profiler, tmp_path: Path, row: str, message: str
) -> None:
    table = tmp_path / "p.csv"
    table.write_text(f"{PROBLEM_HEADER}\nok,1,8,8,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1\n{row}\n")
    result = run_profiler("grouped_conv_fwd_tile", "--problems", str(table))
    assert result.returncode == 2
    assert message in result.stderr.splitlines()[0]


def test_problem_table_needs_the_ck_columns(run_profiler, tmp_path: Path) -> None:
    table = tmp_path / "p.csv"
    table.write_text("N,C,K\n1,2,3\n")
    result = run_profiler("grouped_conv_fwd_tile", "--problems", str(table))
    assert result.returncode == 2
    assert "header lacks column 'G'" in result.stderr


def test_shared_dev_suite_parses(run_profiler) -> None:
    suite = SHARED_PROBLEMS / "dev_suite.csv"
    if not suite.is_file():
        pytest.skip(f"{suite} not present")
    rows = len([line for line in suite.read_text().splitlines()[1:] if line.strip()])
    result = run_profiler("--direction", "fwd,bwd_data,bwd_weight", "--problems", str(suite), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert sum(line.startswith("problem ") for line in result.stdout.splitlines()) == 3 * rows


@pytest.mark.skipif(gpu_present(), reason="a GPU is present: the no-GPU error cannot be observed")
def test_running_a_problem_without_a_gpu_is_one_clear_error(run_profiler) -> None:
    result = run_profiler("grouped_conv_fwd_tile", *CK_STEM)
    assert result.returncode == 3
    assert result.stderr.splitlines() == [
        line for line in result.stderr.splitlines() if line.startswith("error: no usable CUDA GPU")
    ]
    assert len(result.stderr.splitlines()) == 1
    assert "[Valid]" not in result.stdout and "device:" not in result.stdout
