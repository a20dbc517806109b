"""The nvcc flags, in one place. Changing anything here changes every compile signature (full rebuild)."""

from __future__ import annotations

# -gencode rather than the -arch=sm_90a shorthand, which misbehaves with nvcc 13.0 (HOPPER notes).
GENCODE: dict[str, str] = {
    "sm_90a": "-gencode=arch=compute_90a,code=sm_90a",
    "sm_80": "-gencode=arch=compute_80,code=sm_80",
}
COMMON_FLAGS: tuple[str, ...] = ("-std=c++17", "-O3", "--expt-relaxed-constexpr")
# The static CUDA runtime keeps the profiler runnable (for --list) on machines without a CUDA install.
LINK_FLAGS: tuple[str, ...] = ("-cudart=static",)


# Arch macros the host pass needs (it cannot see the device target): the Hopper kernels exist on sm_90a only.
ARCH_DEFINES: dict[str, tuple[str, ...]] = {"sm_90a": ("-DTILEDISPATCH_SM90A",), "sm_80": ()}


def compile_flags(arch: str) -> list[str]:
    return [*COMMON_FLAGS, GENCODE[arch], *ARCH_DEFINES[arch]]
