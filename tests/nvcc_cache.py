"""The nvcc the tests compile with, and a compile cached by content: one output per digest under build/,
shared by xdist workers through a file lock (a partial output is renamed into place only when nvcc
succeeds)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
_VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"
PINNED_NVCC = REPO_ROOT / ".venv" / "lib" / _VERSION / "site-packages" / "nvidia" / "cu13" / "bin" / "nvcc"


def find_nvcc() -> Path | None:
    """$TD_NVCC, else the pinned wheel's nvcc, else the system CUDA's (the GPU machine has no wheel)."""
    for candidate in (
        os.environ.get("TD_NVCC"),
        str(PINNED_NVCC),
        "/usr/local/cuda/bin/nvcc",
        shutil.which("nvcc"),
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def compile_cached(nvcc: Path, sources: list[Path], flags: list[str], out_dir: Path, output: str) -> Path:
    """`nvcc flags sources -o out_dir/output`, unless an earlier run (or another worker) built it already."""
    target = out_dir / output
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_file():
            temp = out_dir / f"partial.{output}"
            result = subprocess.run(
                [str(nvcc), *flags, *map(str, sources), "-o", str(temp)],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                raise RuntimeError(f"nvcc failed for {output}:\n{result.stdout}\n{result.stderr}")
            temp.rename(target)
    return target
