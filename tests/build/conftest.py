"""Fixtures of the build tests (helpers in build_sandbox.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_sandbox import Sandbox, make_sandbox


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return make_sandbox(tmp_path / "checkout")


@pytest.fixture
def built(sandbox: Sandbox) -> Sandbox:
    """A sandbox after one full build (profiler and check); the call log starts empty."""
    sandbox.scons("check")
    sandbox.reset_calls()
    return sandbox
