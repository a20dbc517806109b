"""Instance strings computed by the C++ templates at compile time match the generator's prediction.

The traits structs are written here from each configuration's fields (docs/architecture.md §2a) with the C++
spellings the Python enums carry; the C++ side builds the string with ``build_instance_string<Traits>()``, the
function ``ImplicitGemmInstance::instance_string()`` returns (DESIGN decision 3).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.conftest import compile_and_run

config_module = pytest.importorskip(
    "generators.config", reason="generators.config (KernelConfig) not available"
)
enums = pytest.importorskip("generators.enums", reason="generators.enums not available")
KernelConfig = config_module.KernelConfig


def _configs() -> list:
    e = enums
    base = dict(
        tile_m=128,
        tile_n=128,
        tile_k=32,
        wave_m=2,
        wave_n=2,
        wave_k=1,
        warp_tile_m=32,
        warp_tile_n=32,
        warp_tile_k=16,
    )
    return [
        KernelConfig(direction=e.Direction.FWD, dtype=e.DataType.FP16, ndim_spatial=2, **base),
        KernelConfig(
            direction=e.Direction.FWD,
            dtype=e.DataType.BF16,
            ndim_spatial=3,
            pipeline=e.Pipeline.COMPV4,
            double_smem_buffer=True,
            specialization=e.Specialization.FILTER1X1_PAD0,
            vector_size_a=8,
            **base,
        ),
        KernelConfig(
            direction=e.Direction.FWD,
            dtype=e.DataType.FP16,
            ndim_spatial=2,
            num_groups_to_merge=8,
            split_image=True,
            explicit_gemm=True,
            scheduler=e.Scheduler.INTERWAVE,
            pipeline=e.Pipeline.MEM,
            **base,
        ),
        KernelConfig(
            direction=e.Direction.BWD_DATA,
            dtype=e.DataType.FP32,
            ndim_spatial=2,
            vector_size_a=1,
            vector_size_b=2,
            vector_size_c=4,
            pipeline=e.Pipeline.BASIC_V1,
            **base,
        ),
        KernelConfig(
            direction=e.Direction.BWD_DATA,
            dtype=e.DataType.FP16,
            ndim_spatial=3,
            specialization=e.Specialization.FILTER1X1_STRIDE1_PAD0,
            pipeline=e.Pipeline.COMPV6,
            **base,
        ),
        KernelConfig(
            direction=e.Direction.BWD_WEIGHT,
            dtype=e.DataType.BF16,
            ndim_spatial=2,
            tile_m=128,
            tile_n=128,
            tile_k=32,
            wave_m=4,
            wave_n=1,
            wave_k=1,
            warp_tile_m=16,
            warp_tile_n=16,
            warp_tile_k=16,
            vector_size_a=4,
            vector_size_b=4,
            vector_size_c=4,
        ),
        KernelConfig(
            direction=e.Direction.BWD_WEIGHT,
            dtype=e.DataType.FP16,
            ndim_spatial=2,
            tile_m=64,
            tile_n=64,
            tile_k=64,
            wave_m=2,
            wave_n=2,
            wave_k=1,
            warp_tile_m=16,
            warp_tile_n=16,
            warp_tile_k=16,
            vector_size_a=8,
            vector_size_b=8,
            vector_size_c=8,
            pipeline=e.Pipeline.BASIC_ASYNC_V1,
            streamk_enabled=True,
            streamk_reduction=e.StreamKReduction.TREE,
        ),
        KernelConfig(
            direction=e.Direction.BWD_WEIGHT,
            dtype=e.DataType.FP32,
            ndim_spatial=3,
            two_stage=True,
            streamk_enabled=True,
            streamk_reduction=e.StreamKReduction.LINEAR,
            streamk_persistent=True,
            num_wave_groups=2,
            **base,
        ),
    ]


def _traits(name: str, c) -> str:
    b = lambda v: "true" if v else "false"  # noqa: E731
    return f"""struct {name} {{
  static constexpr ConvDirection kDirection = {c.direction.cpp};
  static constexpr int kNDimSpatial = {c.ndim_spatial};
  static constexpr DataType kDataType = {c.dtype.cpp};
  static constexpr ConvSpecialization kSpecialization = {c.specialization.cpp};
  static constexpr int kTileM = {c.tile_m}, kTileN = {c.tile_n}, kTileK = {c.tile_k};
  static constexpr int kWaveM = {c.wave_m}, kWaveN = {c.wave_n}, kWaveK = {c.wave_k};
  static constexpr int kWarpTileM = {c.warp_tile_m}, kWarpTileN = {c.warp_tile_n};
  static constexpr int kWarpTileK = {c.warp_tile_k};
  static constexpr int kVectorSizeA = {c.vector_size_a}, kVectorSizeB = {c.vector_size_b};
  static constexpr int kVectorSizeC = {c.vector_size_c};
  static constexpr Pipeline kPipeline = {c.pipeline.cpp};
  static constexpr Scheduler kScheduler = {c.scheduler.cpp};
  static constexpr Epilogue kEpilogue = {c.epilogue.cpp};
  static constexpr bool kDoubleSmemBuffer = {b(c.double_smem_buffer)};
  static constexpr int kNumWaveGroups = {c.num_wave_groups};
  static constexpr int kNumGroupsToMerge = {c.num_groups_to_merge};
  static constexpr bool kSplitImage = {b(c.split_image)};
  static constexpr bool kExplicitGemm = {b(c.explicit_gemm)};
  static constexpr bool kTwoStage = {b(c.two_stage)};
  static constexpr bool kStreamK = {b(c.streamk_enabled)};
  static constexpr StreamKReduction kStreamKReduction = {c.streamk_reduction.cpp};
  static constexpr bool kStreamKPersistent = {b(c.streamk_persistent)};
  static constexpr int kBlockPerCu = {c.block_per_cu};
}};
"""


def test_compiled_instance_strings_match_generator(nvcc: Path, tmp_path: Path) -> None:
    configs = _configs()
    body = "\n".join(_traits(f"traits_{i}", c) for i, c in enumerate(configs))
    prints = "\n".join(
        f'  std::printf("%s\\n", std::string(kernels::build_instance_string<traits_{i}>().view()).c_str());'
        for i in range(len(configs))
    )
    source = tmp_path / "strings.cpp"
    source.write_text(
        '#include <cstdio>\n#include <string>\n#include "tiledispatch/kernels/instance_string.hpp"\n'
        f"namespace tiledispatch {{\n{body}\n}}\nusing namespace tiledispatch;\nint main() {{\n{prints}\n}}\n"
    )
    got = compile_and_run(nvcc, source, tmp_path, []).splitlines()
    want = [c.instance_string for c in configs]
    assert got == want
    assert len(set(got)) == len(got)  # the configurations differ, so must their strings


def test_cpp_enum_tokens_match_python(nvcc: Path, tmp_path: Path) -> None:
    e = enums
    groups = [e.Direction, e.DataType, e.Pipeline, e.Scheduler, e.Specialization, e.Epilogue]
    lines, want = [], []
    for group in groups:
        for member in group:
            lines.append(f'  std::printf("%s\\n", std::string(to_token({member.cpp})).c_str());')
            # The C++ to_token of a direction/epilogue is the canonical value; of the others the CK token.
            want.append(member.value if group in (e.Direction, e.Epilogue) else member.token)
    for member in e.StreamKReduction:
        lines.append(f'  std::printf("%d\\n", static_cast<int>({member.cpp}));')
        want.append(member.token)
    source = tmp_path / "tokens.cpp"
    source.write_text(
        '#include <cstdio>\n#include <string>\n#include "tiledispatch/runtime/types.hpp"\n'
        "using namespace tiledispatch;\nint main() {\n" + "\n".join(lines) + "\n}\n"
    )
    assert compile_and_run(nvcc, source, tmp_path, []).splitlines() == want
