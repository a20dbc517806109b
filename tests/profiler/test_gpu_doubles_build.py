"""The GPU test doubles (fixtures/gpu_instances.cu) compile on any machine with nvcc: the GPU tests that run
them only run on the GPU machine, so without this a change to the instance interface could leave them unbuilt
until then (as a workspace_bytes signature change once did)."""

from __future__ import annotations

import os
from pathlib import Path


def test_gpu_profiler_with_test_doubles_builds(gpu_profiler: Path) -> None:
    assert gpu_profiler.is_file() and os.access(gpu_profiler, os.X_OK)
