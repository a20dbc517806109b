"""Fixtures of the runtime tests: the C API over the test-double instances, built once per source content."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest
from runtime_build import FIXTURES, build_shared, c_api_sources, fake_models_source, find_nvcc

from tiledispatch import Registry


@pytest.fixture(scope="session")
def fake_library() -> Path:
    """libtiledispatch over fixtures/fake_runtime_instances.cpp and the doubles' models (no CUDA call of its
    own)."""
    if find_nvcc() is None:
        pytest.skip("no nvcc: neither the pinned wheel nor a system CUDA is installed")
    sources = [*c_api_sources(), FIXTURES / "fake_runtime_instances.cpp", fake_models_source()]
    return build_shared("tiledispatch_fake", sources)


@pytest.fixture
def registry(fake_library: Path) -> Registry:
    return Registry.load(fake_library)


@pytest.fixture
def last_run(fake_library: Path):
    """Reads what the last fake run() received: pointers, stream, workspace bytes, k_batch, kernel name."""
    lib = ctypes.CDLL(str(fake_library))
    lib.td_fake_last_run.restype = ctypes.c_int
    lib.td_fake_last_run.argtypes = [
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.c_char_p),
    ]

    def read() -> dict[str, object]:
        pointers = (ctypes.c_void_p * 5)()
        size, k_batch, name = ctypes.c_size_t(), ctypes.c_int(), ctypes.c_char_p()
        runs = lib.td_fake_last_run(pointers, ctypes.byref(size), ctypes.byref(k_batch), ctypes.byref(name))
        return {
            "runs": runs,
            "input": pointers[0],
            "weight": pointers[1],
            "output": pointers[2],
            "workspace": pointers[3],
            "stream": pointers[4],
            "workspace_bytes": size.value,
            "k_batch": k_batch.value,
            "name": name.value.decode(),
        }

    return read
