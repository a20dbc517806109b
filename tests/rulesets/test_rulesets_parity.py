"""Parity with the legacy data in ../shared/legacy: (a) native lines byte-identical, (b) the first tool's JSON
field for field, (c) the parity report ok with hand-counted numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generators.config import KernelConfig
from rulesets import RulesetError, RulesetRequest, WarpTileKConvention, enumerate_ruleset
from rulesets.conf_tokens import is_comment_or_blank
from rulesets.legacy import read_legacy_dir
from rulesets.parity import build_report

NATIVE_PREFIX = "GroupedConvolution"


def test_native_lines_byte_identical(legacy_dir: Path) -> None:
    checked = 0
    for result in read_legacy_dir(legacy_dir, WarpTileKConvention.CURRENT):
        by_name = {c.name: c for c in result.configs}
        for outcome in result.outcomes:
            if not outcome.text.startswith(NATIVE_PREFIX) or "Depthwise" in outcome.text:
                continue
            config = by_name[outcome.names[0]]
            if outcome.notes:
                # Normalised lines (NDim/layout contradicting the file): only the layout tokens may differ.
                assert config.instance_string == outcome.canonical_text
                assert outcome.text.replace(
                    "NDHWGC,GKZYXC,EmptyTuple,NDHWGK", "NHWGC,GKYXC,EmptyTuple,NHWGK"
                ) == (config.instance_string)
            else:
                assert config.instance_string == outcome.text
            checked += 1
    assert checked == 23  # 18 profiler + 5 tests stream-K lines


def test_bwd_data_tests_reproduce_first_tool_json(legacy_dir: Path) -> None:
    json_path = legacy_dir.parent / "ck_dispatcher_json" / "backward_data" / "tests" / "nhwgc_fp16.json"
    expected = json.loads(json_path.read_text())["instances"]
    request = RulesetRequest.build(
        ruleset="tests", direction="bwd_data", dtype="fp16", ndim=2, warp_tile_k_convention="first_tool"
    )
    result = enumerate_ruleset(request)
    configs = [*result.configs, *(r.config for r in result.rejected)]
    assert len(configs) == len(expected) == 15
    renamed = {"warp_m": "wave_m", "warp_n": "wave_n", "warp_k": "wave_k"}
    by_fields = {}
    for config in configs:
        assert isinstance(config, KernelConfig)
        dumped = config.model_dump(mode="json")
        by_fields[config.name] = dumped
    remaining = list(by_fields.values())
    for item in expected:
        wanted = {
            renamed.get(k, k): v for k, v in item.items() if k not in ("id", "streamk_reduction_strategy")
        }
        wanted["pipeline"] = {"compv1": "compv1"}.get(wanted["pipeline"], wanted["pipeline"])
        match = [d for d in remaining if all(d[k] == v for k, v in wanted.items())]
        assert len(match) == 1, f"JSON instance {item['id']} not reproduced: {wanted}"
        remaining.remove(match[0])
    assert result.skipped and result.skipped[0].line_number == 15  # the JSON has no id 14 (line 15)


def test_first_tool_convention_differs_from_current(legacy_dir: Path) -> None:
    def warp_k(convention: str) -> list[int]:
        request = RulesetRequest.build(
            ruleset="tests", direction="bwd_data", dtype="fp16", ndim=2, warp_tile_k_convention=convention
        )
        result = enumerate_ruleset(request)
        return sorted(c.warp_tile_k for c in [*result.configs, *(r.config for r in result.rejected)])

    assert warp_k("first_tool") != warp_k("current")


# Hand-counted from the files (README's active-line table; skips read off the lines themselves).
HAND_COUNTS = {
    # path: (lines, comments, device ops, skipped, duplicates)
    "backward_data/profiler/nhwgc_fp16.conf": (82, 0, 82, 12, 0),
    "backward_data/tests/nhwgc_fp16.conf": (16, 0, 16, 1, 0),
    "backward_weight/profiler/nhwgc_fp16_streamk.conf": (27, 9, 18, 0, 0),
    "backward_weight/tests/nhwgc_fp16.conf": (48, 0, 48, 9, 2),
    "backward_weight/tests/nhwgc_fp16_streamk.conf": (8, 3, 5, 0, 0),
    "forward/profiler/ngchw_depthwise.conf": (72, 52, 20, 0, 0),
    "forward/tests/ngchw_depthwise.conf": (31, 25, 6, 0, 0),
    "forward/tests/nhwgc_fp16.conf": (63, 0, 63, 0, 8),
}


def test_parity_report_ok_with_hand_counts(legacy_dir: Path) -> None:
    report = build_report(legacy_dir)
    assert report.ok, report.render()
    counted = {
        f.path: (f.lines, f.comment_lines, f.device_op_lines, len(f.skipped), len(f.duplicates))
        for f in report.files
    }
    assert counted == HAND_COUNTS
    for f in report.files:
        assert f.parsed + len(f.skipped) + len(f.duplicates) == f.device_op_lines
    text = report.render()
    assert "parity: ok" in text and "odd vector size in vec 4,5,2" in text
    for path in HAND_COUNTS:
        raw = (legacy_dir / path).read_text().splitlines()
        assert sum(1 for line in raw if not is_comment_or_blank(line)) == HAND_COUNTS[path][2]


def test_parity_report_not_ok_on_unexplained_line(tmp_path: Path) -> None:
    path = tmp_path / "forward" / "tests" / "nhwgc_fp16.conf"
    path.parent.mkdir(parents=True)
    path.write_text("# comment\nDeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<1,2,3>\n")
    report = build_report(tmp_path)
    assert not report.ok
    assert f"{path}:2: " in report.render() and "parity: NOT ok" in report.render()


@pytest.mark.parametrize("subset", ["profiler", "tests"])
def test_legacy_rulesets_hold_every_unique_line(legacy_dir: Path, subset: str) -> None:
    result = enumerate_ruleset(
        RulesetRequest.build(ruleset=subset, direction="bwd_weight", dtype="fp16", ndim=2)
    )
    expected = {"profiler": 18, "tests": 37 + 5}[subset]
    assert len(result.configs) + len(result.rejected) == expected


def test_parity_report_lists_each_rejected_legacy_configuration(legacy_dir: Path) -> None:
    report = build_report(legacy_dir, "sm_90a", "current")
    by_path = {f.path: f for f in report.files}
    # bwd_data tests line 10: ScalarPerVector A 16 in fp16 (32 bytes: two 16-byte accesses) is an instance;
    # bwd_weight tests line 23: explicit GEMM BlkTile 256x256 on BlkSize 256 (256 fp32 accumulators per
    # thread) stays rejected.
    vec16 = by_path["backward_data/tests/nhwgc_fp16.conf"]
    assert not vec16.rejected and vec16.instances == vec16.configurations > 0
    assert not any(r.rule == "vector_width" for f in report.files for r in f.rejected)
    (big,) = by_path["backward_weight/tests/nhwgc_fp16.conf"].rejected
    assert (big.line_number, big.rule) == (23, "register_budget") and "_256x256x32_" in big.name
    for f in report.files:
        assert sum(n for _, n in f.rejected_by_rule) == len(f.rejected)
        assert f.instances == f.configurations - len(f.rejected)
    assert f"arch-rejected line 23 (register_budget): {big.name}: " in report.render()


def test_parity_report_takes_the_warp_tile_k_convention(legacy_dir: Path) -> None:
    current = build_report(legacy_dir)
    first_tool = build_report(legacy_dir, convention="first_tool")
    assert current.convention is WarpTileKConvention.CURRENT
    assert first_tool.convention is WarpTileKConvention.FIRST_TOOL
    assert "warp_tile_k convention first_tool" in first_tool.render()
    names = {r.name for f in first_tool.files for r in f.rejected}
    # 32x32 fp16 warp tile: k_mfma 8 for the first tool, 16 now -> a different warp_tile_k in the names.
    assert any("_32x32x8_" in n for n in names) and not any(
        "_32x32x8_" in r.name for f in current.files for r in f.rejected if "fp16" in r.name
    )


def test_parity_report_bad_convention_is_one_line(legacy_dir: Path) -> None:
    with pytest.raises(RulesetError) as caught:
        build_report(legacy_dir, convention="newest")
    assert str(caught.value) == "unknown warp_tile_k convention 'newest'; accepted: current, first_tool"
