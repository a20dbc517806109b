"""Builds the C API shared library over the test-double instances (fixtures/fake_runtime_instances.cpp) and
their compiled-in selection models (fake_models_source), once per source content (cached under
build/test-runtime, shared by xdist workers through a file lock)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from generators.embedded_models import render_embedded_models
from heuristics.features import FEATURE_NAMES
from heuristics.tree_model import Tree, TreeModel
from tests.nvcc_cache import compile_cached, find_nvcc

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CACHE_DIR = REPO_ROOT / "build" / "test-runtime"


def c_api_sources() -> list[Path]:
    src = REPO_ROOT / "instances" / "src"
    return [src / "c_api.cpp", src / "registry.cpp", src / "selection.cpp"]


def split_k_model() -> TreeModel:
    """The doubles' bwd_weight model: +1 for a split-K factor above 1, +1 above 3, -3 above 8, so the factors
    4 to 8 rank first (the first of them in a kernel's candidate order wins the tie)."""
    split_k = FEATURE_NAMES.index("split_k")
    trees = tuple(
        Tree(split_feature=(split_k,), threshold=(bound,), left=(-1,), right=(-2,), leaf_value=(0.0, gain))
        for bound, gain in ((1.5, 1.0), (3.5, 1.0), (8.5, -3.0))
    )
    return TreeModel(direction="bwd_weight", feature_names=FEATURE_NAMES, trees=trees)


def fake_models_source() -> Path:
    """The doubles' compiled-in models (generators.embedded_models): bwd_weight's split_k_model only; fwd
    and bwd_data have none, so their selection falls back to the tile heuristic."""
    text = render_embedded_models({"bwd_weight": split_k_model().to_text()})
    path = CACHE_DIR / f"fake_models-{hashlib.sha256(text.encode()).hexdigest()[:16]}.cpp"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(path)
    return path


def _digest(paths: list[Path], flags: list[str]) -> str:
    h = hashlib.sha256("\0".join(flags).encode())
    include = REPO_ROOT / "instances" / "include" / "tiledispatch"
    headers = sorted(
        [*include.glob("*.h"), *(include / "runtime").glob("*.hpp"), *(include / "selection").glob("*.hpp")]
    )
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
