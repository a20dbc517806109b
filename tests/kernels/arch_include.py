"""The generated arch header for compiles outside SCons: the build writes it into its generated directory (an
include root of every compile); a test that compiles kernels by hand writes it the same way."""

from __future__ import annotations

from pathlib import Path

from driver.build_api import generate_arch_header


def arch_include(out_dir: Path) -> Path:
    """An include root under ``out_dir`` holding ``tiledispatch/generated/arch_traits.hpp`` (every arch)."""
    root = out_dir / "arch_include"
    generate_arch_header(root)
    return root
