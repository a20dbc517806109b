"""The nvcc flags, in one place. Changing anything here changes every compile signature (full rebuild)."""

from __future__ import annotations

# -gencode rather than the -arch=sm_90a shorthand, which misbehaves with nvcc 13.0 (HOPPER notes).
GENCODE: dict[str, str] = {
    "sm_90a": "-gencode=arch=compute_90a,code=sm_90a",
    "sm_80": "-gencode=arch=compute_80,code=sm_80",
}
# -fPIC for every host object: the same objects go into the static instance libraries (profiler) and into
# libtiledispatch_<ruleset>.so (C API, Python), so each unit is compiled once for both.
COMMON_FLAGS: tuple[str, ...] = ("-std=c++17", "-O3", "--expt-relaxed-constexpr", "-Xcompiler=-fPIC")
# The static CUDA runtime keeps the profiler runnable (for --list) on machines without a CUDA install.
LINK_FLAGS: tuple[str, ...] = ("-cudart=static",)
# The shared library links the static CUDA runtime too: it loads (and lists its kernels) on machines without a
# CUDA install, and shares the driver's primary context with any other runtime in the process (PyTorch, CuPy).
# -Bsymbolic binds the library's references to its own definitions, so that two rule sets' libraries (or any
# library loaded RTLD_GLOBAL before it) never interpose on each other's C++ symbols.
SHARED_LINK_FLAGS: tuple[str, ...] = ("-shared", "-cudart=static", "-Xlinker=-Bsymbolic")


# Arch macros the host pass needs (it cannot see the device target): the Hopper kernels exist on sm_90a only.
# The per-block shared-memory limit (opt-in maximum) is the arch spec's (generators/arch.py; a test checks
# they are equal): the kernels size their shared-memory choices by it.
SMEM_PER_BLOCK_BYTES: dict[str, int] = {"sm_90a": 227 * 1024, "sm_80": 163 * 1024}
ARCH_DEFINES: dict[str, tuple[str, ...]] = {
    "sm_90a": ("-DTILEDISPATCH_SM90A", f"-DTILEDISPATCH_SMEM_PER_BLOCK={SMEM_PER_BLOCK_BYTES['sm_90a']}"),
    "sm_80": (f"-DTILEDISPATCH_SMEM_PER_BLOCK={SMEM_PER_BLOCK_BYTES['sm_80']}",),
}


def compile_flags(arch: str) -> list[str]:
    return [*COMMON_FLAGS, GENCODE[arch], *ARCH_DEFINES[arch]]
