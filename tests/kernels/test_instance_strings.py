"""Instance strings computed by the C++ templates at compile time match the generator's prediction.

The instance headers are the generator's own (its template, rendered as the build renders it), against a stub
instance base; the C++ side builds the string with ``build_instance_string<Traits>()``, the function
``ImplicitGemmInstance::instance_string()`` returns (DESIGN decision 3).
"""

from __future__ import annotations

from pathlib import Path

from generators import enums
from generators.arch import get_arch
from generators.config import KernelConfig
from generators.emit import render_instance_header
from tests.kernels.conftest import compile_and_run


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


# Stands in for the instance header so that the generated headers compile without CuTe: the instance string
# is all this test reads, and it comes from the traits alone.
_STUB_INSTANCE = """#pragma once
#include <string_view>
#include "tiledispatch/generated/arch_traits.hpp"
#include "tiledispatch/kernels/instance_string.hpp"
namespace tiledispatch {
template <class Traits> struct ImplicitGemmInstance {
  static constexpr auto kInstanceString = kernels::build_instance_string<Traits>();
  virtual ~ImplicitGemmInstance() = default;
  virtual std::string_view name() const = 0;
};
}  // namespace tiledispatch
"""


def test_compiled_instance_strings_match_generator(nvcc: Path, tmp_path: Path) -> None:
    configs = _configs()
    stub = tmp_path / "stub" / "tiledispatch" / "kernels" / "implicit_gemm_instance.hpp"
    stub.parent.mkdir(parents=True)
    stub.write_text(_STUB_INSTANCE)
    includes, prints = [], []
    for config in configs:
        # The generator's own instance header (the build renders the same); the arch is not in the string.
        (tmp_path / f"{config.name}.hpp").write_text(render_instance_header(config, get_arch()))
        includes.append(f'#include "{config.name}.hpp"')
        prints.append(
            f'  std::printf("%s %s\\n", std::string(generated::{config.name}{{}}.name()).c_str(), '
            f"std::string(generated::{config.name}_base::kInstanceString.view()).c_str());"
        )
    source = tmp_path / "strings.cpp"
    source.write_text(
        "#include <cstdio>\n#include <string>\n" + "\n".join(includes) + "\nusing namespace tiledispatch;\n"
        "int main() {\n" + "\n".join(prints) + "\n}\n"
    )
    got = compile_and_run(nvcc, source, tmp_path, [f"-I{tmp_path / 'stub'}"]).splitlines()
    want = [f"{c.name} {c.instance_string}" for c in configs]
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
