"""The tree is ruff clean, lint and format, with the pinned ruff of requirements.txt (pyproject.toml holds the
rules), so CI holds the Python style the project asks for instead of leaving it to each session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_the_tree_is_ruff_clean(command: list[str]) -> None:
    pytest.importorskip("ruff", reason="ruff is not installed (requirements.txt)")
    ran = subprocess.run(
        [sys.executable, "-m", "ruff", *command], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, f"ruff {' '.join(command)}:\n{ran.stdout[-4000:]}{ran.stderr[-2000:]}"
