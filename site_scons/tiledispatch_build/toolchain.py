"""Toolchain resolution: where nvcc, the static CUDA runtime and the CuTe headers are, and what they are.

``pinned`` takes the CUDA 13.0 wheels installed in the running Python's site-packages (requirements.txt);
``system`` takes a named CUDA install. Either way the CuTe headers come from the pinned ``nvidia-cutlass``
wheel. The ``identity`` string (nvcc's own version banner, the host compiler's, the wheel versions) is what
enters the build signatures, so a toolchain change recompiles everything while the checkout's absolute paths
do not.
"""

from __future__ import annotations

import subprocess
import sysconfig
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

# The only environment the tools see: nothing from the caller's PATH, CUDA_HOME, CC/CXX or NVCC_* leaks in.
HERMETIC_ENV: dict[str, str] = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
HOST_COMPILER = Path("/usr/bin/g++")
PINNED_PACKAGES = (
    "nvidia-cuda-nvcc",
    "nvidia-nvvm",
    "nvidia-cuda-crt",
    "nvidia-cuda-runtime",
    "nvidia-cuda-cccl",
    "nvidia-cutlass",
)


class ToolchainError(RuntimeError):
    """The toolchain cannot be used; the message says what is missing and how to get it."""


class Toolchain(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["pinned", "system"]
    nvcc: Path
    cuda_lib_dir: Path
    cute_include: Path
    host_compiler: Path
    identity: str


def _run_version(tool: Path) -> str:
    try:
        probe = subprocess.run(
            [str(tool), "--version"],
            capture_output=True,
            text=True,
            env=HERMETIC_ENV,
            check=False,
            timeout=60,
        )
    except OSError as error:
        raise ToolchainError(f"cannot run {tool}: {error.strerror}") from None
    if probe.returncode != 0:
        raise ToolchainError(f"{tool} --version failed with status {probe.returncode}")
    return probe.stdout.strip()


def _package_versions(names: tuple[str, ...]) -> str:
    versions = []
    for name in names:
        try:
            versions.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            raise ToolchainError(f"package {name} is not installed; run scripts/bootstrap.sh") from None
    return " ".join(versions)


def _cute_include(site_packages: Path) -> Path:
    include = site_packages / "cutlass_library" / "source" / "include"
    if not (include / "cute" / "tensor.hpp").is_file():
        raise ToolchainError(
            f"CuTe headers not found at {include}; run scripts/bootstrap.sh (nvidia-cutlass)"
        )
    return include


def _cudart_dir(candidates: list[Path]) -> Path:
    for candidate in candidates:
        if (candidate / "libcudart_static.a").is_file():
            return candidate
    raise ToolchainError(f"libcudart_static.a not found in any of {', '.join(str(c) for c in candidates)}")


def resolve_toolchain(
    kind: Literal["pinned", "system"], cuda_root: Path | None, site_packages: Path | None = None
) -> Toolchain:
    """Locate and identify the toolchain; raise ``ToolchainError`` with a one-line reason if unusable."""
    packages = site_packages or Path(sysconfig.get_paths()["purelib"])
    if kind == "pinned":
        root = packages / "nvidia" / "cu13"
        nvcc = root / "bin" / "nvcc"
        if not nvcc.is_file():
            raise ToolchainError(f"toolchain=pinned: nvcc not found at {nvcc}; run scripts/bootstrap.sh")
        lib_dir = _cudart_dir([root / "lib"])
        wheels = _package_versions(PINNED_PACKAGES)
    else:
        if cuda_root is None:
            raise ToolchainError("toolchain=system needs cuda_root=DIR")
        nvcc = cuda_root / "bin" / "nvcc"
        lib_dir = _cudart_dir(
            [cuda_root / "lib64", cuda_root / "lib", cuda_root / "targets/x86_64-linux/lib"]
        )
        wheels = _package_versions(("nvidia-cutlass",))
    if not HOST_COMPILER.is_file():
        raise ToolchainError(f"host compiler {HOST_COMPILER} not found; install g++")
    identity = "\n".join(
        [f"toolchain={kind}", _run_version(nvcc), _run_version(HOST_COMPILER).splitlines()[0], wheels]
    )
    return Toolchain(
        kind=kind,
        nvcc=nvcc,
        cuda_lib_dir=lib_dir,
        cute_include=_cute_include(packages),
        host_compiler=HOST_COMPILER,
        identity=identity,
    )
