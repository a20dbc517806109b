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


def compile_flags(arch: str) -> list[str]:
    """No arch defines: an instance's traits name its arch, whose limits the generated arch header holds."""
    return [*COMMON_FLAGS, GENCODE[arch]]
