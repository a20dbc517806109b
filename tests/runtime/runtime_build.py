"""Builds the C API shared library over the test-double instances (fixtures/fake_runtime_instances.cpp), once
per source content (cached under build/test-runtime, shared by xdist workers through a file lock)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.nvcc_cache import compile_cached, find_nvcc

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CACHE_DIR = REPO_ROOT / "build" / "test-runtime"


def c_api_sources() -> list[Path]:
    src = REPO_ROOT / "instances" / "src"
    return [src / "c_api.cpp", src / "registry.cpp", src / "selection.cpp"]


def _digest(paths: list[Path], flags: list[str]) -> str:
    h = hashlib.sha256("\0".join(flags).encode())
    include = REPO_ROOT / "instances" / "include" / "tiledispatch"
    headers = sorted([*include.glob("*.h"), *(include / "runtime").glob("*.hpp")])
    for path in [*paths, *headers]:
        h.update(str(path.relative_to(REPO_ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def build_shared(name: str, sources: list[Path]) -> Path:
    """Compile `sources` into one shared library (static CUDA runtime, as SCons links it)."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise RuntimeError("no nvcc found (pinned wheel, $TD_NVCC, /usr/local/cuda)")
    flags = ["-std=c++17", "-O1", "-Xcompiler=-fPIC", "-shared", "-cudart=static", "-Xlinker=-Bsymbolic"]
    flags += ["-I", str(REPO_ROOT / "instances" / "include")]
    lib_dir = nvcc.parent.parent / "lib"
    if (lib_dir / "libcudart_static.a").is_file():
        flags += ["-L", str(lib_dir)]
    out_dir = CACHE_DIR / f"{name}-{_digest(sources, flags)}"
    return compile_cached(nvcc, sources, flags, out_dir, f"lib{name}.so")
