"""Shared pytest configuration: GPU tests skip with a stated reason on machines without one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


def _gpu_reason() -> str | None:
    """Return why GPU tests cannot run here, or None when an NVIDIA GPU answers."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "no NVIDIA GPU: nvidia-smi not found"
    probe = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
    if probe.returncode != 0 or "GPU" not in probe.stdout:
        return "no NVIDIA GPU: nvidia-smi lists none"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def legacy_dir() -> Path:
    path = SHARED_DIR / "legacy" / "ck_builder_configs"
    if not path.is_dir():
        pytest.skip(f"legacy CK Builder configs not found at {path}")
    return path
