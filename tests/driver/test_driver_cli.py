"""``python -m generators``: outputs, and every error path is one line with exit 2 (never a traceback)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from driver.build_api import GenerateRequest, generate, plan
from driver.cli import main
from generators.naming import parse_kernel_name

REPO = Path(__file__).resolve().parents[2]
SMALL = ["--ruleset", "tiny", "--direction", "bwd_data", "--dtype", "fp16", "--ndim", "2"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["count", "--ruleset", "bogus"], "unknown rule set 'bogus'; accepted: tiny, default"),
        (["count", "--dtype", "fp16,fp8"], "unknown dtype 'fp8'; accepted: fp16, bf16, fp32"),
        (["list", "--direction", "up"], "unknown direction 'up'; accepted: fwd, bwd_data, bwd_weight"),
        (["list", "--ndim", "1"], "unknown ndim '1'; accepted: 2, 3"),
        (["list", "--arch", "sm_70"], "unknown arch 'sm_70'; accepted: sm_90a, sm_80"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["count", "--colour"], "unrecognized arguments: --colour"),
        (["show", "grouped_conv_nope"], "'grouped_conv_nope' is not a kernel name"),
        (["parity", "--legacy-dir", "/nonexistent/l"], "legacy directory /nonexistent/l does not exist"),
        (["export-json", *SMALL, "--output", "/proc/none/x.json"], "cannot write --output /proc/none/x.json"),
        (["generate", "--out-dir", "/proc/none", *SMALL], "cannot write --out-dir /proc/none"),
        (["list", *SMALL, "--kernels", "Bwd"], "bad filter 'Bwd' in --kernels: 'B' appears"),
        (["list", *SMALL, "--exclude-kernels", "a b"], "bad filter 'a b' in --exclude-kernels"),
        (["export-json", *SMALL, "--kernels", "nosuch"], "--kernels nosuch keeps none of the"),
        (["show", "--kernels", "fwd", "x"], "unrecognized arguments: --kernels"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line_exit_2(argv, message):
    run = subprocess.run(
        [sys.executable, "-m", "generators", *argv], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("python -m generators: error: ")
    assert message in lines[0]


def test_show_prints_fields(capsys):
    name = (
        "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_4x1x1_16x16x16_vec4_4_4"
    )
    assert main(["show", name]) == 0
    out = capsys.readouterr().out
    assert f"name: {name}\n" in out
    assert (
        "instance_string: GroupedConvolutionBackwardWeightKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,4,4,4"
        in out
    )
    assert "tile_m: 128\n" in out and "wave_m: 4\n" in out and "family: implicit_gemm\n" in out
    assert "validity on sm_90a: valid\n" in out


def test_count_list_and_export_agree(tmp_path, capsys):
    assert main(["count", *SMALL]) == 0
    table = capsys.readouterr().out.splitlines()
    row = next(line for line in table if line.startswith("bwd_data"))
    count = int(row.split()[3])
    assert count > 0
    assert main(["list", *SMALL]) == 0
    names = capsys.readouterr().out.split()
    assert len(names) == count and names == sorted(names)
    output = tmp_path / "out.json"
    assert main(["export-json", *SMALL, "--output", str(output)]) == 0
    instances = json.loads(output.read_text())["instances"]
    assert [i["name"] for i in instances] == names
    for item in instances:
        config = parse_kernel_name(item["name"])
        assert item["instance_string"] == config.instance_string
        assert {"direction", "dtype", "ndim", "family", "category", "tile_m", "pipeline"} <= set(item)
        assert {k: item[k] for k in config.model_dump(mode="json")} == config.model_dump(mode="json")
    first = output.read_bytes()
    assert main(["export-json", *SMALL, "--output", str(output)]) == 0
    assert output.read_bytes() == first


def test_build_api_plan_matches_generate(tmp_path):
    request = GenerateRequest.build(
        ruleset="tiny", direction="bwd_weight", dtypes=["fp16"], ndims=[2], chunk=3
    )
    planned = plan(request)
    assert GenerateRequest.model_validate_json(request.model_dump_json()) == request
    assert generate(request, tmp_path) == planned
    on_disk = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert on_disk == planned
    expected = (tmp_path / "expected_bwd_weight.txt").read_text().splitlines()
    assert len([p for p in planned if p.startswith("kernels/")]) == len(expected)
    empty = GenerateRequest.build(ruleset="tiny", direction="fwd", dtypes=[])
    assert plan(empty) == ["expected_fwd.txt", "register_fwd.cpp"]


def test_generate_request_bad_value():
    with pytest.raises(ValueError, match="unknown arch 'sm_70'; accepted: sm_90a, sm_80"):
        GenerateRequest.build(ruleset="tiny", direction="fwd", arch="sm_70")


def test_name_filters_select_the_same_instances_in_list_count_and_generate(tmp_path, capsys):
    base = ["--ruleset", "tiny", "--ndim", "2"]
    assert main(["list", *base]) == 0
    every = capsys.readouterr().out.split()
    # The filters' rule written as a regular expression, applied to the whole listing.
    wanted = [n for n in every if re.search("16_n.*128x|fp32", n) and "bwd_weight" not in n]
    assert 0 < len(wanted) < len(every)
    filters = ["--kernels", "16_n*128x,fp32", "--exclude-kernels", "bwd_weight"]
    assert main(["list", *base, *filters]) == 0
    assert capsys.readouterr().out.split() == wanted
    assert main(["count", *base, *filters]) == 0
    total = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("total"))
    assert int(total.split()[1]) == len(wanted)
    assert main(["generate", *base, *filters, "--out-dir", str(tmp_path)]) == 0
    expected = [
        line.split()[0] for path in tmp_path.glob("expected_*.txt") for line in path.read_text().splitlines()
    ]
    assert sorted(expected) == sorted(wanted)
