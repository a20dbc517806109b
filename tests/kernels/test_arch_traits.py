"""The compiled arch header: every ``ArchTraits<Arch>`` member and every pipeline strategy (with and without
double_smem_buffer), read by C++, equals the arch spec the validity rules read (generators/arch.py)."""

from __future__ import annotations

from pathlib import Path

from generators.arch import ARCH_NAMES, ArchSpec, get_arch
from generators.enums import Pipeline
from tests.kernels.conftest import compile_and_run

# ArchTraits member -> ArchSpec field.
MEMBERS = {
    "kCudaArch": "cuda_arch",
    "kMaxThreadsPerBlock": "max_threads_per_block",
    "kMaxThreadsPerSm": "max_threads_per_sm",
    "kSmemPerBlockBytes": "smem_per_block_bytes",
    "kSmemPerSmBytes": "smem_per_sm_bytes",
    "kRegistersPerThread": "registers_per_thread",
    "kRegistersPerSm": "registers_per_sm",
    "kMaxAccumulatorsPerThread": "max_accumulators_per_thread",
    "kMaxAccessBytes": "max_access_bytes",
    "kMaxVectorBytes": "max_vector_bytes",
    "kHasWgmma": "has_wgmma",
}


def _expected(arch: ArchSpec) -> list[str]:
    lines = [f"{arch.name} token {arch.name}"]
    lines += [f"{arch.name} {member} {int(getattr(arch, field))}" for member, field in MEMBERS.items()]
    for pipeline in Pipeline:
        for dsb in (False, True):
            s = arch.pipeline_strategy(pipeline, dsb)
            flags = (s.async_copy, s.register_prefetch, s.prefetch, s.fragment_double_buffer)
            bits = " ".join(str(int(f)) for f in flags)
            lines.append(f"{arch.name} {pipeline.value} dsb{int(dsb)} {s.stages} {bits}")
    return lines


def _program(arches: list[ArchSpec]) -> str:
    calls = []
    for arch in arches:
        calls.append(f'  print_arch<{arch.cpp}>("{arch.name}");')
        for pipeline in Pipeline:
            for dsb in ("false", "true"):
                calls.append(
                    f'  print_strategy<{arch.cpp}>("{arch.name}", "{pipeline.value}", {pipeline.cpp}, {dsb});'
                )
    members = "".join(f'  std::printf("%s {m} %d\\n", name, int(T::{m}));\n' for m in MEMBERS)
    return (
        "#include <cstdio>\n#include <string>\n"
        '#include "tiledispatch/generated/arch_traits.hpp"\n'
        "using namespace tiledispatch;\n"
        "template <Arch A> void print_arch(const char* name) {\n"
        "  using T = ArchTraits<A>;\n"
        '  std::printf("%s token %s\\n", name, std::string(to_token(A)).c_str());\n'
        f"{members}"
        "}\n"
        "template <Arch A> void print_strategy(const char* arch, const char* name, Pipeline p, bool dsb) {\n"
        "  const PipelineStrategy t = ArchTraits<A>::pipeline_strategy(p, dsb);\n"
        '  std::printf("%s %s dsb%d %d %d %d %d %d\\n", arch, name, int(dsb), t.stages, int(t.async_copy),\n'
        "              int(t.register_prefetch), int(t.prefetch), int(t.fragment_double_buffer));\n"
        "}\n"
        "int main() {\n" + "\n".join(calls) + "\n}\n"
    )


def test_compiled_arch_traits_equal_the_arch_specs(nvcc: Path, tmp_path: Path) -> None:
    arches = [get_arch(name) for name in ARCH_NAMES]
    source = tmp_path / "arch_traits.cpp"
    source.write_text(_program(arches))
    got = compile_and_run(nvcc, source, tmp_path, []).splitlines()
    want = [line for arch in arches for line in _expected(arch)]
    assert got == want
