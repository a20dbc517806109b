"""Compiles the profiler sources for the tests, once per source content (cached under build/, shared by xdist
workers through a file lock)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from generators.embedded_models import write_embedded_models
from tests.nvcc_cache import compile_cached, find_nvcc

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CACHE_DIR = REPO_ROOT / "build" / "test-profiler"


def embedded_models_source() -> Path:
    """The committed selection models rendered as the build renders them (the profiler's --select default)."""
    out = CACHE_DIR / "embedded_models.cpp"
    write_embedded_models(REPO_ROOT / "heuristics" / "models", out)
    return out


def profiler_sources() -> list[Path]:
    src = REPO_ROOT / "profiler" / "src"
    return [
        *sorted([*src.glob("*.cpp"), *src.glob("*.cu")]),
        REPO_ROOT / "instances" / "src" / "registry.cpp",
        embedded_models_source(),
    ]


def _digest(paths: list[Path], flags: list[str]) -> str:
    h = hashlib.sha256("\0".join(flags).encode())
    include = REPO_ROOT / "instances" / "include"
    headers = sorted([*include.rglob("*.hpp"), *include.rglob("*.cuh")]) + sorted(FIXTURES.rglob("*.cu*"))
    headers += sorted((REPO_ROOT / "profiler" / "src").glob("*.hpp"))
    for path in [*paths, *headers]:
        h.update(str(path.relative_to(REPO_ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def build(name: str, sources: list[Path], extra_flags: list[str] | None = None) -> Path:
    """Compile `sources` into one executable; return its path. Raises RuntimeError with nvcc's output."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise RuntimeError("no nvcc found (pinned wheel, $TD_NVCC, /usr/local/cuda)")
    flags = [
        "-std=c++17",
        "-O2",
        "-gencode=arch=compute_90a,code=sm_90a",
        "-I",
        str(REPO_ROOT / "instances" / "include"),
        "-I",
        str(REPO_ROOT / "profiler" / "src"),
        "-cudart",
        "static",
        *(extra_flags or []),
    ]
    lib_dir = nvcc.parent.parent / "lib"
    if (lib_dir / "libcudart_static.a").is_file():
        flags += ["-L", str(lib_dir)]
    return compile_cached(nvcc, sources, flags, CACHE_DIR / f"{name}-{_digest(sources, flags)}", name)
