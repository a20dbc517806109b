"""Pure pieces of the build rules: default parallelism and option parsing, without SCons."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_sandbox import REPO_ROOT

pytestmark = pytest.mark.build

GIB = 1 << 30


@pytest.fixture
def build_rules(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "site_scons"))
    from tiledispatch_build import jobs, options

    return jobs, options


@pytest.mark.parametrize(
    ("cores", "memory_gib", "chunk", "expected"),
    [(2, 24, 25, 2), (16, 128, 25, 10), (16, 128, 1, 16), (16, 24, 10, 4), (4, 1, 1, 1)],
)
def test_default_jobs_is_cores_capped_by_memory(build_rules, cores, memory_gib, chunk, expected) -> None:
    # 25 instances per unit: 2 GiB + 25 * 0.4 GiB = 12 GiB per nvcc.
    jobs, _ = build_rules
    assert jobs.default_jobs(cores, memory_gib * GIB, chunk) == expected


@pytest.mark.parametrize(
    ("memory_gib", "chunk", "expected"), [(24, 25, 2), (128, 25, 10), (11, 25, 1), (1, 1, 1), (24, 10, 4)]
)
def test_nvcc_slots_fit_memory_and_are_at_least_one(build_rules, memory_gib, chunk, expected) -> None:
    jobs, _ = build_rules
    assert jobs.nvcc_slots(memory_gib * GIB, chunk) == expected


def test_memory_option_is_gib_or_auto(build_rules) -> None:
    _, options = build_rules
    assert options.parse_options({"memory": "48"}, Path("/repo")).memory_gib == 48
    assert options.parse_options({}, Path("/repo")).memory_gib is None


def test_lists_are_canonical_and_repeats_rejected(build_rules) -> None:
    _, options = build_rules
    parsed = options.parse_options({"directions": "bwd_weight,fwd", "ndims": "3,2"}, Path("/repo"))
    assert parsed.directions == ("fwd", "bwd_weight")
    assert parsed.ndims == (2, 3)
    assert parsed.dtypes == ("fp16", "bf16", "fp32")
    # A value given twice is a typo more often than not: one short line, as the other command lines do.
    with pytest.raises(options.OptionError, match=r"^'fwd' given twice in directions=bwd_weight,fwd,fwd; "):
        options.parse_options({"directions": "bwd_weight,fwd,fwd"}, Path("/repo"))


def test_paths_are_relative_to_the_repository(build_rules, tmp_path: Path) -> None:
    _, options = build_rules
    parsed = options.parse_options({"cache_dir": "cache"}, tmp_path)
    assert parsed.cache_dir == tmp_path / "cache"
    assert parsed.legacy_dir == tmp_path / "../shared/legacy/ck_builder_configs"
    assert parsed.variant == "tiny-sm_90a"


def test_pinned_toolchain_rejects_a_cuda_root(build_rules) -> None:
    _, options = build_rules
    with pytest.raises(options.OptionError, match="applies only to toolchain=system"):
        options.parse_options({"cuda_root": "/usr/local/cuda"}, Path("/repo"))


def test_compile_flags_carry_no_arch_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arch limits reach the kernels through the generated arch header, selected by the arch their traits name
    (docs/architecture.md §4a), never through defines: an arch's flags are the common ones and its gencode."""
    monkeypatch.syspath_prepend(str(REPO_ROOT / "site_scons"))
    from tiledispatch_build import flags

    from generators.arch import ARCH_NAMES

    assert set(flags.GENCODE) == set(ARCH_NAMES)
    for arch in ARCH_NAMES:
        assert flags.compile_flags(arch) == [*flags.COMMON_FLAGS, flags.GENCODE[arch]]
        assert not any(flag.startswith("-D") for flag in flags.compile_flags(arch))


def test_option_vocabularies_are_the_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """site_scons spells its option choices out (as Literal types for BuildOptions, too); they must be the
    model's, in the model's order (issue 14: one source of truth, or a test that proves them equal)."""
    monkeypatch.syspath_prepend(str(REPO_ROOT / "site_scons"))
    from typing import get_args

    from tiledispatch_build import options

    from generators.arch import ARCH_NAMES
    from generators.enums import DataType, Direction
    from rulesets.request import RulesetName

    model = {
        "RULESETS": tuple(r.value for r in RulesetName),
        "ARCHES": tuple(ARCH_NAMES),
        "DIRECTIONS": tuple(d.value for d in Direction),
        "DTYPES": tuple(t.value for t in DataType),
    }
    for name, values in model.items():
        assert getattr(options, name) == values, name
    assert get_args(options.Ruleset) == model["RULESETS"]
    assert get_args(options.Arch) == model["ARCHES"]
    assert get_args(options.DirectionName) == model["DIRECTIONS"]
    assert get_args(options.DTypeName) == model["DTYPES"]
